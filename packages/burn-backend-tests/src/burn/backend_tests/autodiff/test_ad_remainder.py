"""Gradients of remainder (Burn's remainder.rs)."""

from burn.backend_tests.autodiff.gradcheck import check_grads


def _operands(rng, shape, negative_divisor=False):
    """a = b * (k + f) with f in [0.2, 0.8]: a / b stays away from the jumps at integers."""
    b = rng.uniform(0.6, 1.5, size=shape) * (-1.0 if negative_divisor else 1.0)
    k = rng.integers(-3, 4, size=shape)
    f = rng.uniform(0.2, 0.8, size=shape)
    return b * (k + f), b


def test_should_diff_remainder(ad_backend, rng):
    check_grads(ad_backend, lambda a, b: a.remainder(b), *_operands(rng, (2, 3)))
    check_grads(ad_backend, lambda a, b: a % b, *_operands(rng, (2, 3), negative_divisor=True))


def test_should_diff_remainder_scalar(ad_backend, rng):
    a, _ = _operands(rng, (2, 3))
    check_grads(ad_backend, lambda x: x.remainder_scalar(1.0), a)
    check_grads(ad_backend, lambda x: x % -1.0, a)
