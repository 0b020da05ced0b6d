"""Casts to the element types narrower than any burn computes in: the 8-bit floats (E4M3 and
E5M2, with and without negative zero and infinities), the 8-bit exponent E8M0, the 4-bit float
E2M1, and the 4- and 2-bit integers.

A value of such a type is held in float32 (the float types) or int64 (the integer types), which
represent every one of its values exactly; a cast to it rounds on the host with the `onnx`
package's own conversions (ml_dtypes' types, `numpy_helper.saturate_cast` and
`numpy_helper.to_float8e8m0`), so the held values are the ones the type can represent, as ONNX
rounds and saturates them. Casts out of these types need nothing special: the held values are
exact.
"""

from __future__ import annotations

import numpy as np
import onnx
from burn.onnx.graph import held_array, stored_dtype
from burn.onnx.runtime.shape import fit
from burn.tensor import Bool, Tensor

__all__ = ["narrow"]

_SATURATING = frozenset({"FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ"})


def narrow(
    x: Tensor, to: str, source: str | None = None, saturate: int = 1, round_mode: str = "up"
) -> Tensor:
    """`x` cast to the narrow ONNX element type named `to` (`"FLOAT8E4M3FN"`, `"INT4"`...),
    held in float32 or int64. `source` names the narrow type `x`'s values are of, when they
    are (they are cast from that type, as ONNX would); `saturate` and `round_mode` are Cast's
    attributes."""
    array = np.asarray(x.to_data().array)
    if x.kind is Bool:
        array = array.astype(np.bool_)
    if source is not None:
        array = array.astype(stored_dtype(onnx.TensorProto.DataType.Value(source)))
    dtype = stored_dtype(onnx.TensorProto.DataType.Value(to))
    if to in _SATURATING and saturate:
        out = onnx.numpy_helper.saturate_cast(array, dtype)
    elif to == "FLOAT8E8M0":
        out = onnx.numpy_helper.to_float8e8m0(array, bool(saturate), round_mode).astype(dtype)
    else:
        out = array.astype(dtype)
    held = held_array(out)
    name = "f32" if held.dtype == np.float32 else "i64"
    return Tensor.from_data(
        held.reshape(held.shape or (1,)), device=x.device(), dtype=fit(name, x.device())
    )
