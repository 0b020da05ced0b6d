"""burn.safetensors: modules saved to and loaded from safetensors files.

safetensors holds named tensors and nothing else (a JSON header of names, dtypes, shapes and
byte ranges, then the bytes), so reading one runs no code. The `safetensors` package parses and
validates the header (every range inside the file) before anything is allocated.

```python notest
from burn.pytorch import LoadArgs
from burn.safetensors import SafetensorsFileRecorder, save_safetensors

save_safetensors(model, "model.safetensors")  # PyTorch's names and layouts
record = SafetensorsFileRecorder().load(LoadArgs("model.safetensors"), device)
model = model.load_record(record)
```
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import numpy as np
from burn.module import Module
from burn.pytorch.adapter import LoadArgs, NamedTensor, NamedTensorRecord, layout_of, module_slots
from burn.pytorch.reader import range_reader
from burn.record import (
    FullPrecisionSettings,
    PrecisionSettings,
    RecordError,
    RecordNotFoundError,
    atomic_write,
)
from burn.record.settings import settings_class
from burn.tensor import DType

__all__ = ["SafetensorsError", "SafetensorsFileRecorder", "save_safetensors"]


class SafetensorsError(RecordError):
    """A safetensors file that is damaged, or a tensor of a dtype burn does not model."""


_DTYPES = {
    "F64": DType.F64,
    "F32": DType.F32,
    "F16": DType.F16,
    "BF16": DType.BF16,
    "I64": DType.I64,
    "I32": DType.I32,
    "I16": DType.I16,
    "I8": DType.I8,
    "U8": DType.U8,
    "BOOL": DType.BOOL,
}


def _open(path: Path):
    from safetensors import safe_open

    if not path.is_file():
        raise RecordNotFoundError(f"{path}: no such file")
    try:
        return safe_open(str(path), framework="numpy")
    except Exception as e:  # SafetensorError, OSError, or a header the parser refuses
        raise SafetensorsError(f"{path}: not a valid safetensors file ({e})") from None


def read_tensors(path) -> dict[str, NamedTensor]:
    """The file's tensors by name, read on demand.

    The `safetensors` package validates the file first (the header's JSON, every byte range
    inside the file and consistent with its shape and dtype); the ranges are then read
    straight into new arrays.
    """
    path = Path(path)
    handle = _open(path)
    with open(path, "rb") as f:
        (header_len,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(header_len))  # validated above by safe_open
    start = 8 + header_len
    out: dict[str, NamedTensor] = {}
    for key in handle.keys():
        view = handle.get_slice(key)
        name = view.get_dtype()
        dtype = _DTYPES.get(name)
        if dtype is None:
            raise SafetensorsError(f"{path}: tensor {key!r} has dtype {name}, which burn lacks")
        shape = tuple(view.get_shape())
        first, _ = header[key]["data_offsets"]
        read = range_reader(path, start + first, dtype, error=SafetensorsError)
        count = math.prod(shape)
        out[key] = NamedTensor(
            shape, dtype, lambda read=read, count=count, shape=shape: read(0, count).reshape(shape)
        )
    return out


class SafetensorsFileRecorder:
    """Loads safetensors files into our modules, with `LoadArgs`' remapping and options.

    Args:
        settings: the precision tensors are converted to (`FullPrecisionSettings` by default).
        adapt_from_pytorch: the file uses PyTorch's names and layouts (the default, as files
            from PyTorch and from `save_safetensors(adapt_to_pytorch=True)` do); False for
            files saved with our own names and layouts.
    """

    def __init__(
        self,
        settings: type[PrecisionSettings] | PrecisionSettings = FullPrecisionSettings,
        *,
        adapt_from_pytorch: bool = True,
    ):
        self.settings = settings
        self.adapt_from_pytorch = adapt_from_pytorch

    def load(self, args: LoadArgs | str, device=None) -> NamedTensorRecord:
        """The file's tensors as a record that `module.load_record(record)` accepts."""
        if not isinstance(args, LoadArgs):
            args = LoadArgs(args)
        if args.top_level_key is not None:
            raise RecordError(
                f"{args.path}: safetensors files are flat; top_level_key applies to .pt files"
            )
        tensors = read_tensors(args.path)
        return NamedTensorRecord(
            tensors, args, self.settings, device, pytorch_layout=self.adapt_from_pytorch
        )


def save_safetensors(
    module: Module,
    path,
    *,
    adapt_to_pytorch: bool = True,
    settings: type[PrecisionSettings] | PrecisionSettings | None = None,
    metadata: dict[str, str] | None = None,
) -> Path:
    """Write the module's parameters to `path` as safetensors (atomically). Returns the path.

    Args:
        adapt_to_pytorch: PyTorch's names and layouts (`fc.weight` as `[out, in]`, norms'
            `weight`/`bias`), so `torch.nn.Module.load_state_dict` takes the file as it is;
            False keeps our names (`gamma`) and layouts.
        settings: convert floats and ints per these precision settings; the module's own
            dtypes by default.
        metadata: text pairs stored in the header.
    """
    from safetensors.numpy import save

    path = Path(path)
    converter = settings_class(settings) if settings is not None else None
    arrays: dict[str, np.ndarray] = {}
    for slot in module_slots(module, pytorch_layout=adapt_to_pytorch):
        data = slot.param.val().to_data()
        if converter is not None:
            data = converter.apply(data)
        array = np.ascontiguousarray(data.as_array())
        if adapt_to_pytorch and slot.owner is not None:
            adapt = layout_of(slot.owner).save.get(slot.field)
            if adapt is not None:
                array = adapt(array)
        arrays[slot.key] = array
    try:
        raw = save(arrays, metadata=metadata)
    except Exception as e:
        raise SafetensorsError(f"{path}: cannot encode the module's tensors ({e})") from None
    atomic_write(path, [raw])
    return path
