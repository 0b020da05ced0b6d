"""The autodiff suite: every differentiable op's backward checked against finite differences.

It runs on `Autodiff(B)` for the backend under test (or on the backend itself when it already
tracks gradients, as under `--burn-decorate autodiff`), through the `ad_backend` fixture.
Test names mirror the tests of Burn's burn-autodiff crate (`test_should_diff_add`...).
"""
