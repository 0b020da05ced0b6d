"""Checking `backward()` against central finite differences.

`check_grads(backend, fn, *arrays)` turns each numpy array into a Float tensor that requires a
gradient, reduces `fn`'s output(s) to a scalar with fixed random weights (so every output
element matters, each with a different factor), runs `backward()` and compares each input's
gradient with central differences of the same weighted sum. The differences are accumulated
in float64 on the host, from evaluations of `fn` on untracked tensors, so the reference shares
no code with the backward rules under test.

Backends with f64 are checked in f64 with a tiny step and tight tolerance; others in their
default float dtype with a larger step and a tolerance to match.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from burn.backend_tests.helpers import strided, tensor
from burn.tensor import DType, Float, Tensor

# (step, tolerance) of the finite differences by the dtype the check runs in.
_STEP = {DType.F64: 1e-6, DType.F32: 1e-3}
_TOL = {DType.F64: 1e-6, DType.F32: 2e-2}


def grad_dtype(backend) -> DType:
    """f64 where the backend has it (finite differences are then accurate), else its default."""
    caps = backend.capabilities
    return DType.F64 if caps.supports(DType.F64) else caps.float_dtype


def grad_tolerance(backend) -> float:
    return _TOL.get(grad_dtype(backend), 5e-2)


def host(t: Tensor) -> np.ndarray:
    """A tensor's values as float64 numpy."""
    return np.asarray(t.to_data().array).astype(np.float64)


def _float_outputs(out) -> list[Tensor]:
    """The Float tensors among `fn`'s results (indices and masks carry no gradient)."""
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return [t for t in outs if isinstance(t, Tensor) and t.kind is Float]


def output_weights(shapes: Sequence[Sequence[int]], seed: int) -> list[np.ndarray]:
    """Fixed random weights, one array per output shape, so a peer framework can reuse them."""
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1.0, 1.0, size=tuple(shape)) for shape in shapes]


def weighted_sum(outs: Sequence[Tensor], weights: Sequence[np.ndarray], dtype: DType) -> Tensor:
    """sum_i (out_i * w_i).sum(), as a tracked one-element tensor."""
    total = None
    for out, w in zip(outs, weights, strict=True):
        term = (out * tensor(out.backend, w, dtype)).sum()
        total = term if total is None else total + term
    return total


def _host_loss(fn, arrays, backend, dtype, weights) -> float:
    outs = _float_outputs(fn(*(tensor(backend, a, dtype) for a in arrays)))
    return float(sum(np.sum(host(o) * w) for o, w in zip(outs, weights, strict=True)))


def numeric_grads(fn, arrays, backend, dtype, weights, step: float) -> list[np.ndarray]:
    """Central differences of the weighted sum, one array per input, in float64.

    The step actually taken is measured after rounding to `dtype`, so low-precision inputs do
    not bias the quotient.
    """
    grads = []
    for i, base in enumerate(arrays):
        g = np.zeros(base.shape)
        for j in np.ndindex(base.shape):
            plus, minus = base.copy(), base.copy()
            plus[j] += step
            minus[j] -= step
            plus = host(tensor(backend, plus, dtype))
            minus = host(tensor(backend, minus, dtype))
            hi = _host_loss(fn, [*arrays[:i], plus, *arrays[i + 1 :]], backend, dtype, weights)
            lo = _host_loss(fn, [*arrays[:i], minus, *arrays[i + 1 :]], backend, dtype, weights)
            g[j] = (hi - lo) / (plus[j] - minus[j])
        grads.append(g)
    return grads


def check_grads(
    backend,
    fn: Callable[..., Tensor | Sequence[Tensor]],
    *inputs,
    strided_inputs: bool = False,
    step: float | None = None,
    tol: float | None = None,
    seed: int = 7,
) -> list[np.ndarray]:
    """Assert that every input's gradient from `backward()` matches finite differences.

    Args:
        backend: an autodiff backend (the `ad_backend` fixture).
        fn: maps Float tensors (one per input) to a tensor or a sequence of tensors; Int and
            Bool results are ignored. Constants (indices, masks) are captured by the closure.
        inputs: numpy-compatible arrays, one per differentiable input.
        strided_inputs: build the tracked inputs non-contiguously (`helpers.strided`).
        step, tol: override the dtype's finite-difference step and tolerance.
        seed: seeds the random weights of the outputs.

    Returns:
        The gradients from `backward()`, as float64 arrays, for further assertions.
    """
    dtype = grad_dtype(backend)
    step = step or _STEP.get(dtype, 1e-2)
    tol = tol or _TOL.get(dtype, 5e-2)
    build = strided if strided_inputs else tensor
    xs = [build(backend, np.asarray(a, dtype=np.float64), dtype).require_grad() for a in inputs]
    arrays = [host(x) for x in xs]  # what the tensors hold after rounding to `dtype`
    outs = _float_outputs(fn(*xs))
    assert outs, "check_grads: fn returned no Float tensor"
    weights = output_weights([o.dims() for o in outs], seed)
    grads = weighted_sum(outs, weights, dtype).backward()
    expected = numeric_grads(fn, arrays, backend, dtype, weights, step)
    found = []
    for i, (x, want) in enumerate(zip(xs, expected, strict=True)):
        g = x.grad(grads)
        assert g is not None, f"input {i} got no gradient"
        assert g.backend is backend.inner(), f"input {i}: gradient on {g.backend!r}"
        assert not g.is_require_grad(), f"input {i}: a gradient must not track gradients"
        got = host(g)
        assert got.shape == want.shape, f"input {i}: gradient shape {got.shape} != {want.shape}"
        scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
        np.testing.assert_allclose(
            got, want, rtol=tol, atol=tol * scale, err_msg=f"gradient of input {i}"
        )
        found.append(got)
    return found


def backward_grads(backend, fn, *inputs, seed: int = 7) -> list[np.ndarray | None]:
    """The gradients of the weighted sum of `fn`'s outputs, without a reference (or None)."""
    dtype = grad_dtype(backend)
    xs = [tensor(backend, np.asarray(a, dtype=np.float64), dtype).require_grad() for a in inputs]
    outs = _float_outputs(fn(*xs))
    grads = weighted_sum(outs, output_weights([o.dims() for o in outs], seed), dtype).backward()
    return [None if (g := x.grad(grads)) is None else host(g) for x in xs]
