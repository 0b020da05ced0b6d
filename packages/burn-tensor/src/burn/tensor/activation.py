"""Activation functions on Float tensors (`burn.tensor.activation`), Burn's v0.14 set.

Functions with an op in the backend's `ActivationOps` (relu, gelu, sigmoid, log_sigmoid,
leaky_relu, hard_sigmoid, prelu, softmax, log_softmax) call it, so a backend (or the autodiff
decorator) can run each as one kernel with its own backward. The rest are composed from Tensor
ops, written so that large inputs neither overflow nor lose precision.

```python
from burn.tensor import Tensor, activation
x = Tensor.from_data([[-1.0, 0.0, 2.0]])
probs = activation.softmax(x, dim=1)
```
"""

from __future__ import annotations

from burn.tensor.errors import KindError, ShapeError
from burn.tensor.kind import Float
from burn.tensor.tensor import Tensor

__all__ = [
    "gelu",
    "hard_sigmoid",
    "leaky_relu",
    "log_sigmoid",
    "log_softmax",
    "mish",
    "prelu",
    "quiet_softmax",
    "relu",
    "sigmoid",
    "silu",
    "softmax",
    "softplus",
    "tanh",
]


def _float(x: object, op: str) -> None:
    if not isinstance(x, Tensor):
        raise KindError(f"{op}: expected a Tensor, got {type(x).__name__}")
    if x.kind is not Float:
        raise KindError(f"{op}: needs a Float tensor, got {x.kind.name} {x.dims()}")


def relu(x: Tensor) -> Tensor:
    """max(x, 0)."""
    _float(x, "relu")
    return x._new(x.backend.relu(x.primitive))


def gelu(x: Tensor) -> Tensor:
    """Exact gelu, x * Phi(x) with Phi the standard normal CDF (no tanh approximation)."""
    _float(x, "gelu")
    return x._new(x.backend.gelu(x.primitive))


def sigmoid(x: Tensor) -> Tensor:
    """1 / (1 + exp(-x)), without overflow for large |x|."""
    _float(x, "sigmoid")
    return x._new(x.backend.sigmoid(x.primitive))


def log_sigmoid(x: Tensor) -> Tensor:
    """log(sigmoid(x)), accurate for very negative x where sigmoid underflows."""
    _float(x, "log_sigmoid")
    return x._new(x.backend.log_sigmoid(x.primitive))


def leaky_relu(x: Tensor, negative_slope: float = 0.01) -> Tensor:
    """x where x >= 0, else negative_slope * x."""
    _float(x, "leaky_relu")
    return x._new(x.backend.leaky_relu(x.primitive, float(negative_slope)))


def hard_sigmoid(x: Tensor, alpha: float = 0.2, beta: float = 0.5) -> Tensor:
    """clamp(alpha * x + beta, 0, 1): a cheap piecewise-linear sigmoid."""
    _float(x, "hard_sigmoid")
    return x._new(x.backend.hard_sigmoid(x.primitive, float(alpha), float(beta)))


def prelu(x: Tensor, alpha: Tensor) -> Tensor:
    """leaky_relu with a learned slope: `alpha` is 1-D, one value or one per channel (dim 1)."""
    _float(x, "prelu")
    _float(alpha, "prelu")
    x._peer(alpha, "prelu")
    if alpha.rank() != 1:
        raise ShapeError(f"prelu: alpha must be 1-D, got {alpha.dims()}")
    n = alpha.dims()[0]
    view = [1] * x.rank()
    if n != 1:
        if x.rank() < 2 or x.dims()[1] != n:
            raise ShapeError(f"prelu: {n} slopes do not match the channels (dim 1) of {x.dims()}")
        view[1] = n
    slopes = alpha.reshape(view)
    return x._new(x.backend.prelu(x.primitive, slopes.primitive))


def tanh(x: Tensor) -> Tensor:
    _float(x, "tanh")
    return x.tanh()


def silu(x: Tensor) -> Tensor:
    """x * sigmoid(x) (also called swish)."""
    _float(x, "silu")
    return x * sigmoid(x)


def softplus(x: Tensor, beta: float = 1.0) -> Tensor:
    """log(1 + exp(beta * x)) / beta, as max(z, 0) + log1p(exp(-|z|)) so large x stays finite."""
    _float(x, "softplus")
    z = x * beta if beta != 1.0 else x
    out = z.clamp_min(0) + z.abs().neg().exp().log1p()
    return out / beta if beta != 1.0 else out


def mish(x: Tensor) -> Tensor:
    """x * tanh(softplus(x))."""
    _float(x, "mish")
    return x * softplus(x).tanh()


def softmax(x: Tensor, dim: int) -> Tensor:
    """exp(x) / sum(exp(x)) along `dim`; the max is subtracted first so exp never overflows."""
    _float(x, "softmax")
    dim = x._dim(dim, "softmax")
    return x._new(x.backend.softmax(x.primitive, dim))


def log_softmax(x: Tensor, dim: int) -> Tensor:
    """x - logsumexp(x) along `dim`, exact where log(softmax(x)) would give -inf."""
    _float(x, "log_softmax")
    dim = x._dim(dim, "log_softmax")
    return x._new(x.backend.log_softmax(x.primitive, dim))


def quiet_softmax(x: Tensor, dim: int) -> Tensor:
    """exp(x) / (1 + sum(exp(x))) along `dim` ("softmax1"): all outputs may tend to zero.

    Computed with the max m subtracted: exp(x - m) / (exp(-m) + sum(exp(x - m))).
    """
    _float(x, "quiet_softmax")
    dim = x._dim(dim, "quiet_softmax")
    m = x.detach().max_dim(dim)
    e = (x - m).exp()
    return e / (e.sum_dim(dim) + m.neg().exp())
