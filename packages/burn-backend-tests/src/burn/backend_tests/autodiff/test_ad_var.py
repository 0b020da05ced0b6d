"""Gradients of var, var_bias, var_mean and var_mean_bias."""

from burn.backend_tests.autodiff.gradcheck import check_grads


def test_should_diff_var(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.var(1), rng.normal(size=(2, 4)))
    check_grads(ad_backend, lambda x: x.var_bias(0), rng.normal(size=(3, 2)), strided_inputs=True)


def test_should_diff_var_mean(ad_backend, rng):
    check_grads(ad_backend, lambda x: x.var_mean(1), rng.normal(size=(2, 4)))
    check_grads(ad_backend, lambda x: x.var_mean_bias(0), rng.normal(size=(3, 2)))
