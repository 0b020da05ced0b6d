"""Custom differentiable ops: a forward on any backend, a backward written with tensor ops.

This is the Python side of Burn's backend-extension pattern. The forward may call anything
(a fused kernel of your backend, numpy, a hand-written WGSL kernel); the backward receives the
output gradient and returns one gradient per input, written with ordinary `Tensor` ops.

```python
from burn.autodiff import Autodiff, CustomOp
from burn.backend import NdArray
from burn.tensor import Tensor

class Square(CustomOp):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved
        return (grad * x * 2.0,)

x = Tensor[Autodiff(NdArray), 1].from_data([1.0, 2.0]).require_grad()
y = Square.apply(x)
assert x.grad(y.sum().backward()).to_data().to_list() == [2.0, 4.0]
```
"""

from __future__ import annotations

from burn.tensor import Float, Tensor
from burn.tensor.errors import BackendError, ShapeError


class Context:
    """What a forward hands to its backward."""

    def __init__(self):
        self.saved: tuple = ()
        self.needs_grad: tuple[bool, ...] = ()

    def save_for_backward(self, *values) -> None:
        """Keep tensors (of the inner backend) or any other values for the backward."""
        self.saved = values


class CustomOp:
    """Subclass with static `forward(ctx, *inputs)` and `backward(ctx, grad)`, then `apply`.

    On an autodiff backend, `forward` runs on the inner backend (tensors arrive unwrapped, no
    graph is recorded inside) and `backward` gets the output gradient as an inner tensor; it
    returns a tuple with one gradient or None per input. On any other backend `apply` simply
    runs `forward`.
    """

    @staticmethod
    def forward(ctx: Context, *inputs):
        raise NotImplementedError

    @staticmethod
    def backward(ctx: Context, grad: Tensor):
        raise NotImplementedError

    @classmethod
    def apply(cls, *inputs):
        tensors = [x for x in inputs if isinstance(x, Tensor)]
        if not tensors:
            raise BackendError(f"{cls.__name__}.apply: needs at least one tensor input")
        backend = tensors[0].backend
        ctx = Context()
        if not backend.tracks_gradients():
            return cls.forward(ctx, *inputs)
        inner_inputs = tuple(x.inner() if isinstance(x, Tensor) else x for x in inputs)
        ctx.needs_grad = tuple(
            isinstance(x, Tensor) and x.kind is Float and x.is_require_grad() for x in inputs
        )
        out = cls.forward(ctx, *inner_inputs)
        if not isinstance(out, Tensor):
            raise BackendError(f"{cls.__name__}.forward must return one Tensor")
        tracked = [x for x in inputs if isinstance(x, Tensor)]
        positions = [i for i, x in enumerate(inputs) if isinstance(x, Tensor)]
        shapes = [x.dims() for x in tracked]
        inner_backend = backend.inner()

        def backward(grad, needs):
            grads = cls.backward(ctx, Tensor._make(inner_backend, grad, Float))
            if not isinstance(grads, (tuple, list)):
                grads = (grads,)
            if len(grads) != len(inputs):
                raise BackendError(
                    f"{cls.__name__}.backward returned {len(grads)} gradients "
                    f"for {len(inputs)} inputs"
                )
            picked = []
            for pos, shape, need in zip(positions, shapes, needs, strict=True):
                g = grads[pos]
                if not need or g is None:
                    picked.append(None)
                    continue
                if g.dims() != shape:
                    raise ShapeError(
                        f"{cls.__name__}.backward: gradient {pos} has shape {g.dims()}, "
                        f"input has {shape}"
                    )
                picked.append(g.primitive)
            return tuple(picked)

        inputs_prims = tuple(x.primitive for x in tracked)
        prim = backend._track(out.primitive, inputs_prims, backward, cls.__name__)
        return Tensor._make(backend, prim, out.kind)
