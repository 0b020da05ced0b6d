"""A tour of the Tensor API on the default backend: create, compute, reduce, fit, print.

Run it with `uv run python examples/tensor-tour/main.py`. Every tensor below lives on the
backend that `burn.backend.default()` picks (set `BURN_BACKEND` to choose another), which is
the point: the same program runs unchanged on any backend.
"""

from __future__ import annotations

from burn.backend import default
from burn.tensor import Distribution, Int, Tensor


def creation(device) -> None:
    print("== creation")
    x = Tensor.from_data([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device)
    print(x)
    print("zeros:", Tensor.zeros([2, 2], device).to_data())
    print("arange:", Tensor[1, Int].arange(0, 5, device).to_data())
    noise = Tensor.random([2, 3], Distribution.Normal(0.0, 1.0), device)
    print("random normal, shape", noise.dims(), "dtype", noise.dtype.value)


def arithmetic(device) -> None:
    print("== arithmetic and broadcasting")
    x = Tensor.from_data([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device)
    bias = Tensor.from_data([[10.0, 20.0, 30.0]], device)  # [1, 3] broadcasts over the rows
    print("x + bias:", (x + bias).to_data().to_list())
    print("x * 2 - 1:", (x * 2.0 - 1.0).to_data().to_list())
    print("exp(x) row 0:", x[0].exp().to_data().to_list())
    print("x > 3:", x.greater_elem(3.0).to_data().to_list())


def reductions(device) -> None:
    print("== reductions (the reduced dim is kept, as in Burn)")
    x = Tensor.from_data([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]], device)
    print("sum:", x.sum().into_scalar())
    print("mean over dim 1:", x.mean_dim(1).to_data().to_list())
    print("max over dim 0:", x.max_dim(0).to_data().to_list())
    print("argmax over dim 1:", x.argmax(1).to_data().to_list())


def least_squares(device) -> tuple[float, float]:
    """Fit y = a x + b by the closed form: a = xc.yc / xc.xc on centred data, as matmuls."""
    print("== least squares")
    n = 200
    x = Tensor.random([n, 1], Distribution.Uniform(-1.0, 1.0), device)
    noise = Tensor.random([n, 1], Distribution.Normal(0.0, 0.05), device)
    y = x * 3.0 + 2.0 + noise

    x_mean, y_mean = x.mean(), y.mean()  # shape [1]: broadcasts against [n, 1]
    xc, yc = x - x_mean.unsqueeze(), y - y_mean.unsqueeze()
    slope = xc.transpose().matmul(yc) / xc.transpose().matmul(xc)  # [1, 1]
    intercept = y_mean - slope.reshape([1]) * x_mean
    a, b = float(slope), float(intercept)
    print(f"fitted y = {a:.3f} x + {b:.3f} (true: 3 x + 2)")
    return a, b


def main() -> None:
    backend = default()
    device = backend.device()
    backend.seed(42)  # the random tensors below are reproducible
    print(f"backend: {backend!r}, device: {device!r}")
    creation(device)
    arithmetic(device)
    reductions(device)
    a, b = least_squares(device)
    assert abs(a - 3.0) < 0.1 and abs(b - 2.0) < 0.1, "the fit should recover the line"


if __name__ == "__main__":
    main()
