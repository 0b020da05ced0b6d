"""burn-record: records, recorders and precision settings, in Rust Burn's file layouts.

A record is plain data (nested dicts, lists and tuples of `ParamRecord`, `TensorData` and None)
produced by a module's `into_record()`; a recorder stores it in a file or bytes.

```python
from burn.record import CompactRecorder, NamedMpkFileRecorder, FullPrecisionSettings
recorder = NamedMpkFileRecorder(FullPrecisionSettings)
```
"""

from burn.record.atomic import atomic_write
from burn.record.item import (
    DeferredRecord,
    ParamRecord,
    RecordError,
    RecordNotFoundError,
    Some,
    unwrap_some,
)
from burn.record.limits import MAX_RECORD_BYTES, max_record_bytes
from burn.record.recorder import (
    FORMAT_VERSION,
    BinBytesRecorder,
    BinFileRecorder,
    BinGzFileRecorder,
    BytesRecorder,
    CompactRecorder,
    DefaultFileRecorder,
    DefaultRecorder,
    FileRecorder,
    JsonGzFileRecorder,
    NamedMpkBytesRecorder,
    NamedMpkFileRecorder,
    NamedMpkGzFileRecorder,
    PrettyJsonFileRecorder,
    Recorder,
    SensitiveCompactRecorder,
)
from burn.record.settings import (
    DoublePrecisionSettings,
    FullPrecisionSettings,
    HalfPrecisionSettings,
    PrecisionSettings,
)

__all__ = [
    "FORMAT_VERSION",
    "BinBytesRecorder",
    "BinFileRecorder",
    "BinGzFileRecorder",
    "BytesRecorder",
    "CompactRecorder",
    "DefaultFileRecorder",
    "DefaultRecorder",
    "DeferredRecord",
    "DoublePrecisionSettings",
    "FileRecorder",
    "FullPrecisionSettings",
    "HalfPrecisionSettings",
    "JsonGzFileRecorder",
    "MAX_RECORD_BYTES",
    "NamedMpkBytesRecorder",
    "NamedMpkFileRecorder",
    "NamedMpkGzFileRecorder",
    "ParamRecord",
    "PrecisionSettings",
    "PrettyJsonFileRecorder",
    "RecordError",
    "RecordNotFoundError",
    "Recorder",
    "SensitiveCompactRecorder",
    "Some",
    "atomic_write",
    "max_record_bytes",
    "unwrap_some",
]
