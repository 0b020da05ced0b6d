"""Linear quantization: QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear (per tensor,
per axis, or in blocks along an axis), for the integer types burn holds and for the narrow ones
it holds in wider types (`burn.onnx.runtime.narrow`)."""

from __future__ import annotations

import numpy as np
from burn.onnx.runtime.math import round_even
from burn.onnx.runtime.narrow import narrow
from burn.onnx.runtime.shape import fit
from burn.tensor import Tensor

__all__ = [
    "dequantize_linear",
    "dynamic_quantize_linear",
    "qlinear_conv",
    "qlinear_matmul",
    "quantize_linear",
]

# The integer types QuantizeLinear produces, by ONNX name: their range and the burn dtype that
# holds them (unsigned 16-bit and sub-byte values are held as i64).
_INTEGER_TYPES = {
    "UINT8": ((0, 255), "u8"),
    "INT8": ((-128, 127), "i8"),
    "UINT16": ((0, 65535), "i64"),
    "INT16": ((-32768, 32767), "i16"),
    "INT4": ((-8, 7), "i64"),
    "UINT4": ((0, 15), "i64"),
    "INT2": ((-2, 1), "i64"),
    "UINT2": ((0, 3), "i64"),
}
# The same by burn dtype, for a model whose graph does not say the quantized type.
_RANGES = {"u8": (0, 255), "i8": (-128, 127), "i16": (-32768, 32767), "i32": (-(2**31), 2**31 - 1)}


def _broadcast(param: Tensor, x: Tensor, axis: int, block_size: int) -> Tensor:
    """A scale or zero point shaped to multiply `x`: scalar, per axis, or per block."""
    if param.num_elements() == 1 and param.rank() <= 1:
        return param.reshape([1] * x.rank())
    axis %= x.rank()
    if block_size:
        index = Tensor.from_data(
            np.arange(x.dims()[axis]) // block_size, device=x.device(), dtype=fit("i64", x.device())
        )
        return param.select(axis, index)
    shape = [1] * x.rank()
    shape[axis] = param.num_elements()
    return param.reshape(shape)


def quantize_linear(
    x: Tensor,
    y_scale: Tensor,
    y_zero_point: Tensor | None = None,
    axis: int = 1,
    block_size: int = 0,
    output_dtype: str = "u8",
    saturate: int = 1,
    precision: int = 0,
    quantized_type: str | None = None,
) -> Tensor:
    """`x / scale` rounded to even, plus the zero point, clipped to the quantized type's range.
    `quantized_type` is the ONNX name of the output's type (`"UINT8"`, `"INT4"`,
    `"FLOAT8E4M3FN"`...): an integer type clips to its range, a float one rounds (and with
    `saturate`, saturates) as the type does, through `burn.onnx.runtime.narrow`. Without it the
    type is the zero point's, or `output_dtype`."""
    if quantized_type in _INTEGER_TYPES:
        (lo, hi), held = _INTEGER_TYPES[quantized_type]
        dtype = fit(held, x.device())
    else:
        dtype = y_zero_point.dtype.value if y_zero_point is not None else output_dtype
        lo, hi = _RANGES.get(dtype, (0, 255))
    scale = _broadcast(y_scale, x, axis, block_size)
    # `x / scale` in x's own precision, as the spec computes it (a float64 quotient rounds a
    # value near a tie to the other integer); half precision divides in float32.
    work = x if x.dtype.value in ("f32", "f64") else x.float("f32")
    kind = work.dtype.value
    if quantized_type is not None and quantized_type not in _INTEGER_TYPES:  # a float type
        q = work / scale.float(kind)
        if quantized_type == "FLOAT4E2M1" and y_zero_point is not None:
            q = q + _broadcast(y_zero_point, x, axis, block_size).float(kind)
        return narrow(q, quantized_type, saturate=saturate)  # a float8's zero point is 0
    q = round_even(work / scale.float(kind))
    if y_zero_point is not None:
        q = q + _broadcast(y_zero_point, x, axis, block_size).float(kind)
    return q.clamp(lo, hi).int(dtype)


def dequantize_linear(
    x: Tensor,
    x_scale: Tensor,
    x_zero_point: Tensor | None = None,
    axis: int = 1,
    block_size: int = 0,
    output_dtype: str | None = None,
) -> Tensor:
    scale = _broadcast(x_scale, x, axis, block_size)
    values = x.float("f64")
    if x_zero_point is not None:
        values = values - _broadcast(x_zero_point, x, axis, block_size).float("f64")
    out = values * scale.float("f64")
    return out.cast(output_dtype or scale.dtype.value)


def dynamic_quantize_linear(x: Tensor):
    """`x` quantized to uint8 with a scale and zero point from its own range, in float32 as the
    spec's formulas (and onnxruntime) compute them: the range stretched to hold 0, the scale
    `(max - min) / 255` (1 for an all-zero input), the zero point `rint(clip(-min / scale))`,
    then `rint(x / scale) + zero point` clipped to [0, 255]. Computing any step in float64
    instead moves an element that sits near a rounding tie to the neighbouring integer."""
    f32 = np.float32
    low = f32(min(0.0, float(x.min())))
    high = f32(max(0.0, float(x.max())))
    scale = f32(1.0) if high == low else f32(high - low) / f32(255)
    zero = np.rint(np.clip(f32(0) - low / scale, 0, 255))
    q = round_even(x.float("f32") / float(scale)) + float(zero)
    y = q.clamp(0, 255).int("u8")
    device = x.device()
    return (
        y,
        Tensor.from_data([float(scale)], device=device, dtype="f32"),
        Tensor.from_data([int(zero)], device=device, dtype="u8"),
    )


def _dequant(x: Tensor, scale: Tensor, zero: Tensor | None, axis: int) -> Tensor:
    return dequantize_linear(x, scale, zero, axis=axis, output_dtype="f64")


def qlinear_matmul(a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero) -> Tensor:
    """Quantized matmul: dequantize (per tensor, per row of `a`, per column of `b`), multiply,
    quantize to the output's scale and zero point."""
    from burn.onnx.runtime.nn import matmul

    left = _dequant(a, a_scale, a_zero, max(a.rank() - 2, 0))
    right = _dequant(b, b_scale, b_zero, b.rank() - 1)
    out = matmul(left, right)
    return quantize_linear(out, y_scale.float("f64"), y_zero, axis=out.rank() - 1)


def qlinear_conv(x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero, bias=None, **attrs):
    from burn.onnx.runtime.nn import conv

    xf = _dequant(x, x_scale, x_zero, 1)
    wf = _dequant(w, w_scale, w_zero, 0)
    b = None
    if bias is not None:
        scale = (x_scale.float("f64").reshape([1]) * w_scale.float("f64")).reshape([-1])
        b = bias.float("f64") * scale
    out = conv(xf, wf, b, **attrs)
    return quantize_linear(out, y_scale.float("f64"), y_zero, axis=1)
