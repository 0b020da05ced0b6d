"""Shape ops: reshape, squeeze, concat, slice, pad, expand... with ONNX's rules."""

from __future__ import annotations

import numpy as np
from burn.tensor import Bool, DType, Int, Tensor
from burn.tensor.errors import ShapeError

__all__ = [
    "as_ints",
    "as_scalar",
    "const",
    "fit",
    "full",
    "host_tensor",
    "align",
    "concat",
    "constant_of_shape",
    "depth_to_space",
    "expand",
    "eye_like",
    "flatten",
    "pad",
    "range_",
    "reshape",
    "shape_of",
    "size_of",
    "slice_",
    "space_to_depth",
    "split",
    "squeeze",
    "tensor_of",
    "tile",
    "transpose",
    "trilu",
    "unsqueeze",
]


_KINDS = {"bool": Bool, "i64": Int, "i32": Int, "i16": Int, "i8": Int, "u8": Int}


def fit(dtype, device) -> str:
    """`dtype`, or the backend's own int or float dtype when the backend lacks it (a backend
    without i64, such as Wgpu, computes ONNX's int64 values in i32)."""
    dtype = getattr(dtype, "value", dtype)
    caps = getattr(getattr(device, "backend", None), "capabilities", None)
    if caps is None:
        from burn.backend import default

        caps = default().capabilities
    parsed = DType.parse(dtype)
    if caps.supports(parsed):
        return dtype
    if parsed.is_int:
        return caps.int_dtype.value
    if parsed.is_float:
        return caps.float_dtype.value
    return dtype


def const(values, dtype: str, device) -> Tensor:
    """A constant of the generated code: `values` as `dtype` (or the nearest the backend has);
    an empty list gives an empty rank-1 tensor."""
    if isinstance(values, list) and not values:
        return full([0], 0, device, dtype)
    return Tensor.from_data(values, device=device, dtype=fit(dtype, device))


def host_tensor(array, dtype: str, device) -> Tensor:
    """Numbers computed on the host (from strings, trees, classic ML models) as a tensor of
    burn dtype `dtype` on `device`; a 0-d result holds one element."""
    array = np.asarray(array)
    dtype = fit(dtype, device)
    if array.size == 0:
        return full(list(array.shape), 0, device, dtype)
    return Tensor.from_data(array.reshape(array.shape or (1,)), device=device, dtype=dtype)


def full(dims, value, device, dtype) -> Tensor:
    """A tensor of `dims` filled with `value`, of any dtype (the kind follows the dtype)."""
    dtype = fit(dtype, device)
    kind = _KINDS.get(dtype)
    cls = Tensor if kind is None else Tensor[None, None, kind]
    return cls.full(list(dims), value, device=device, dtype=dtype)


def as_ints(value) -> list[int]:
    """A list of ints from a list, a number or an Int tensor (shapes, axes, pads)."""
    if value is None:
        return []
    if isinstance(value, Tensor):
        return [int(v) for v in np.asarray(value.to_data().array).reshape(-1)]
    if isinstance(value, (int, np.integer)):
        return [int(value)]
    return [int(v) for v in value]


def tensor_of(values, like: Tensor | None, dtype: str = "i64") -> Tensor:
    """A rank-1 tensor of `values` on the device of `like` (a one-element one for a scalar)."""
    values = list(values) if not isinstance(values, (int, float)) else [values]
    device = like.device() if like is not None else None
    if not values:
        return full([0], 0, device, dtype)
    return Tensor.from_data(values, device=device, dtype=fit(dtype, device))


def align(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """Leading unit dims added to the lower-rank tensor, as numpy's broadcasting does."""
    ra, rb = a.rank(), b.rank()
    if ra < rb:
        a = a.unsqueeze(rb)
    elif rb < ra:
        b = b.unsqueeze(ra)
    return a, b


def _as_shape(dims) -> list[int]:
    return list(dims) if dims else [1]


def reshape(data: Tensor, shape, allowzero: int = 0) -> Tensor:
    target = as_ints(shape)
    dims = data.dims()
    if not allowzero:
        target = [dims[i] if d == 0 and i < len(dims) else d for i, d in enumerate(target)]
    if 0 in target:  # an empty result (burn's reshape reads 0 as "keep this dim")
        return full([0 if d == -1 else d for d in target], 0, data.device(), data.dtype)
    return data.reshape(_as_shape(target))


def flatten(x: Tensor, axis: int = 1, rank: int | None = None) -> Tensor:
    dims = x.dims() if rank != 0 else []
    axis = axis + len(dims) if axis < 0 else axis
    outer = int(np.prod(dims[:axis], dtype=np.int64))
    return x.reshape([outer, int(np.prod(dims[axis:], dtype=np.int64))])


def transpose(x: Tensor, perm=None) -> Tensor:
    perm = as_ints(perm) if perm is not None else list(range(x.rank()))[::-1]
    return x.permute(perm)


def squeeze(x: Tensor, axes=None, rank: int | None = None) -> Tensor:
    dims = x.dims()
    r = len(dims) if rank is None else rank
    axes = [a % r for a in as_ints(axes)] if axes is not None else []
    if not axes:
        axes = [i for i, d in enumerate(dims[:r]) if d == 1]
    kept = [d for i, d in enumerate(dims[:r]) if i not in axes]
    return x.reshape(_as_shape(kept))


def unsqueeze(x: Tensor, axes, rank: int | None = None) -> Tensor:
    dims = x.dims() if rank != 0 else []
    axes = as_ints(axes)
    out_rank = len(dims) + len(axes)
    axes = sorted(a % out_rank for a in axes)
    out, it = [], iter(dims)
    for i in range(out_rank):
        out.append(1 if i in axes else next(it))
    return x.reshape(out)


def concat(tensors, axis: int) -> Tensor:
    parts = [t for t in tensors if t.num_elements() > 0 or t.rank() > 1]
    if not parts:
        return tensors[0]
    if len(parts) == 1:
        return parts[0]
    return Tensor.cat(parts, axis % parts[0].rank())


def split(x: Tensor, split_sizes=None, axis: int = 0, num_outputs: int = 0, outputs: int = 1):
    axis = axis % x.rank()
    size = x.dims()[axis]
    if split_sizes is None or (isinstance(split_sizes, list) and not split_sizes):
        n = num_outputs or outputs
        chunk = -(-size // n)
        sizes = [min(chunk, size - i * chunk) for i in range(n)]
    else:
        sizes = as_ints(split_sizes)
    out, start = [], 0
    for s in sizes:
        out.append(x.narrow(axis, start, s) if s else _empty_along(x, axis))
        start += s
    return out


def _empty_along(x: Tensor, axis: int) -> Tensor:
    dims = x.dims()
    dims[axis] = 0
    return full(dims, 0, x.device(), x.dtype) if x.kind is not Bool else x


def slice_(data: Tensor, starts, ends, axes=None, steps=None) -> Tensor:
    dims = data.dims()
    starts, ends = as_ints(starts), as_ints(ends)
    axes = as_ints(axes) if axes is not None else list(range(len(starts)))
    steps = as_ints(steps) if steps is not None else [1] * len(starts)
    ranges = [slice(None)] * len(dims)
    flips = []
    out_dims = list(dims)
    for start, end, axis, step in zip(starts, ends, axes, steps, strict=False):
        axis %= len(dims)
        size = dims[axis]
        idx = range(*slice(start, end, step).indices(size))
        out_dims[axis] = len(idx)
        if len(idx) == 0:
            continue
        if step > 0:
            ranges[axis] = slice(idx[0], idx[-1] + 1, step)
        else:
            ranges[axis] = slice(idx[-1], idx[0] + 1, -step)
            flips.append(axis)
    if 0 in out_dims:
        return full(out_dims, 0, data.device(), data.dtype)
    out = data.slice(ranges)
    return out.flip(flips) if flips else out


def shape_of(data: Tensor, start: int = 0, end: int | None = None, rank=None) -> Tensor:
    dims = data.dims() if rank != 0 else []
    r = len(dims)
    start = max(0, min(r, start + r if start < 0 else start))
    end = r if end is None else max(0, min(r, end + r if end < 0 else end))
    return tensor_of(dims[start:end], data)


def size_of(data: Tensor, rank=None) -> Tensor:
    return tensor_of([data.num_elements()], data)


def expand(x: Tensor, shape, rank=None) -> Tensor:
    target = as_ints(shape)
    dims = x.dims() if rank != 0 else []
    n = max(len(dims), len(target))
    dims = [1] * (n - len(dims)) + dims
    target = [1] * (n - len(target)) + target
    out = [t if d == 1 else d for d, t in zip(dims, target, strict=True)]
    x = x.reshape(_as_shape(dims)) if dims != x.dims() else x
    return x.expand(_as_shape(out)) if out != dims else x


def tile(x: Tensor, repeats) -> Tensor:
    return x.repeat(as_ints(repeats))


def pad(data: Tensor, pads, constant_value=None, axes=None, mode: str = "constant") -> Tensor:
    pads = as_ints(pads)
    rank = data.rank()
    axes = [a % rank for a in as_ints(axes)] if axes is not None else list(range(rank))
    n = len(axes)
    before = dict(zip(axes, pads[:n], strict=True))
    after = dict(zip(axes, pads[n:], strict=True))
    value = 0
    if constant_value is not None:
        value = as_scalar(constant_value)
    out = data
    for axis in range(rank):
        b, a = before.get(axis, 0), after.get(axis, 0)
        if b < 0 or a < 0:
            size = out.dims()[axis]
            out = out.narrow(axis, max(0, -b), size - max(0, -b) - max(0, -a))
            b, a = max(b, 0), max(a, 0)
        if b or a:
            out = _pad_axis(out, axis, b, a, mode, value)
    return out


def as_scalar(value):
    if isinstance(value, Tensor):
        array = np.asarray(value.to_data().array).reshape(-1)
        if array.size == 0:
            return 0
        v = array[0]
        return (
            bool(v)
            if array.dtype == np.bool_
            else (float(v) if array.dtype.kind == "f" else int(v))
        )
    return value


def _pad_axis(x: Tensor, axis: int, before: int, after: int, mode: str, value) -> Tensor:
    size = x.dims()[axis]
    if mode == "constant":
        parts = []
        if before:
            dims = x.dims()
            dims[axis] = before
            parts.append(full(dims, value, x.device(), x.dtype))
        parts.append(x)
        if after:
            dims = x.dims()
            dims[axis] = after
            parts.append(full(dims, value, x.device(), x.dtype))
        return Tensor.cat(parts, axis)
    if mode == "reflect":
        idx = [abs(i) for i in range(-before, 0)] + list(range(size))
        idx += [size - 2 - i for i in range(after)]
    elif mode == "edge":
        idx = [0] * before + list(range(size)) + [size - 1] * after
    elif mode == "wrap":
        idx = [(i % size) for i in range(-before, size + after)]
    else:
        raise ShapeError(f"Pad: unknown mode {mode!r}")
    index = Tensor.from_data(idx, device=x.device(), dtype=fit("i64", x.device()))
    return x.select(axis, index)


def constant_of_shape(shape, value=None, like: Tensor | None = None, device=None) -> Tensor:
    """A tensor of `shape` (a tensor or a list of ints) filled with `value`, on `device` or
    on the device of `like` or of `shape`."""
    dims = as_ints(shape)
    if device is None:
        device = (like or shape).device() if isinstance(shape, Tensor) or like else None
    if value is None:
        return full(_as_shape(dims), 0, device, "f32")
    array = np.asarray(value).reshape(-1)
    from burn.onnx.codegen import burn_dtype

    dtype = burn_dtype(array.dtype)
    v = array[0].item()
    if 0 in dims:
        return full(dims, 0, device, dtype)
    return full(_as_shape(dims), v, device, dtype)


def range_(start, limit, delta, device=None) -> Tensor:
    """ONNX Range of scalar tensors, or of Python ints (a shape's) on `device`, as int64."""
    s, e, d = as_scalar(start), as_scalar(limit), as_scalar(delta)
    n = max(int(np.ceil((e - s) / d)), 0)
    if not isinstance(start, Tensor):
        values = [s + i * d for i in range(n)]
        return const(values, "i64", device)
    if n == 0:
        return full([0], 0, start.device(), start.dtype)
    if start.kind is Int:
        values = [s + i * d for i in range(n)]
        return Tensor.from_data(values, device=start.device(), dtype=start.dtype)
    steps = Tensor.arange(0, n, device=start.device()).float(start.dtype)
    return steps * d + s


def trilu(x: Tensor, k=None, upper: int = 1) -> Tensor:
    k = as_ints(k)[0] if k is not None else 0
    if x.num_elements() == 0:
        return x
    if x.kind is Bool:
        return trilu(x.int(), [k], upper).bool()
    return x.triu(k) if upper else x.tril(k)


def eye_like(x: Tensor, dtype: str, k: int = 0) -> Tensor:
    rows, cols = x.dims()
    mask = Tensor.diag_mask([rows, cols], k, device=x.device())
    # diag_mask is True off the diagonal (masked positions), as Burn's
    out = full([rows, cols], 1, x.device(), dtype)
    if dtype == "bool":
        return mask.bool_not()
    return out.mask_fill(mask, 0)


def depth_to_space(x: Tensor, blocksize: int, mode: str = "DCR") -> Tensor:
    b, c, h, w = x.dims()
    bs = blocksize
    if mode == "DCR":
        t = x.reshape([b, bs, bs, c // (bs * bs), h, w]).permute([0, 3, 4, 1, 5, 2])
    else:
        t = x.reshape([b, c // (bs * bs), bs, bs, h, w]).permute([0, 1, 4, 2, 5, 3])
    return t.reshape([b, c // (bs * bs), h * bs, w * bs])


def space_to_depth(x: Tensor, blocksize: int, mode: str = "DCR") -> Tensor:
    b, c, h, w = x.dims()
    bs = blocksize
    order = [0, 3, 5, 1, 2, 4] if mode == "DCR" else [0, 1, 3, 5, 2, 4]
    t = x.reshape([b, c, h // bs, bs, w // bs, bs]).permute(order)
    return t.reshape([b, c * bs * bs, h // bs, w // bs])
