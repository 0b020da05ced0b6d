"""burn.pytorch: PyTorch `.pt` weights loaded into our modules, with no code run from the file.

```python notest
from burn.pytorch import LoadArgs, PyTorchFileRecorder
from burn.record import FullPrecisionSettings

args = LoadArgs("model.pt").with_key_remap(r"^fc\\.", "head.")
record = PyTorchFileRecorder(FullPrecisionSettings).load(args, device)
model = model.load_record(record)
```
"""

from burn.pytorch.adapter import LAYOUTS, LoadArgs, ModuleLayout, NamedTensorRecord
from burn.pytorch.recorder import PyTorchFileRecorder, config_from_file
from burn.pytorch.unpickler import PyTorchFileError, UnsafePickleError

__all__ = [
    "LAYOUTS",
    "LoadArgs",
    "ModuleLayout",
    "NamedTensorRecord",
    "PyTorchFileError",
    "PyTorchFileRecorder",
    "UnsafePickleError",
    "config_from_file",
]
