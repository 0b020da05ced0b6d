"""A first check that the fixture machinery works for every backend."""

from burn.backend_tests.helpers import assert_close, tensor


def test_add_d2(backend, rng):
    a = rng.standard_normal((2, 3))
    b = rng.standard_normal((2, 3))
    assert_close(tensor(backend, a) + tensor(backend, b), a + b)
