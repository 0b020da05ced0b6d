"""`PyTorchFileRecorder`: weights of a `.pt` file as a record our modules load."""

from __future__ import annotations

from collections.abc import Mapping

from burn.pytorch.adapter import LoadArgs, NamedTensor, NamedTensorRecord
from burn.pytorch.reader import read_file
from burn.pytorch.unpickler import PyTorchFileError, TensorRef
from burn.record import FullPrecisionSettings, PrecisionSettings, RecordError


def _select(obj, key: str | None, path: str):
    if key is None:
        return obj
    if not isinstance(obj, Mapping):
        raise RecordError(f"{path}: top-level key {key!r} asked, but the file holds a {_kind(obj)}")
    if key not in obj:
        keys = [k for k in obj if isinstance(k, str)]
        raise RecordError(f"{path}: no top-level key {key!r} (the file has {keys[:20]})")
    return obj[key]


def _kind(obj) -> str:
    return "tensor" if isinstance(obj, TensorRef) else type(obj).__name__


def flatten_tensors(obj, path: str) -> dict[str, NamedTensor]:
    """Tensors of nested dicts and lists by dotted key (`encoder.layers.0.weight`).

    Values that are not tensors (epoch counters, config dicts) are skipped.
    """
    if not isinstance(obj, (Mapping, list, tuple)):
        raise RecordError(f"{path}: expected a dict of tensors, the file holds a {_kind(obj)}")
    out: dict[str, NamedTensor] = {}

    def walk(value, key: str) -> None:
        if isinstance(value, TensorRef):
            out[key] = NamedTensor(value.shape, value.dtype, value.load)
        elif isinstance(value, Mapping):
            for k, v in value.items():
                walk(v, f"{key}.{k}" if key else str(k))
        elif isinstance(value, (list, tuple)):
            for i, v in enumerate(value):
                walk(v, f"{key}.{i}" if key else str(i))

    walk(obj, "")
    return out


class PyTorchFileRecorder:
    """Loads PyTorch `.pt`/`.pth` files (both of `torch.save`'s formats) without torch.

    ```python notest
    from burn.pytorch import LoadArgs, PyTorchFileRecorder
    from burn.record import FullPrecisionSettings

    record = PyTorchFileRecorder(FullPrecisionSettings).load(LoadArgs("model.pt"), device)
    model = model.load_record(record)
    ```

    Nothing in the file is run: see `burn.pytorch.unpickler`.

    Args:
        settings: the precision tensors are converted to before the module converts them to
            its own dtypes (`FullPrecisionSettings` by default).
    """

    def __init__(
        self, settings: type[PrecisionSettings] | PrecisionSettings = FullPrecisionSettings
    ):
        self.settings = settings

    def load(self, args: LoadArgs | str, device=None) -> NamedTensorRecord:
        """The file's tensors as a record that `module.load_record(record)` accepts."""
        if not isinstance(args, LoadArgs):
            args = LoadArgs(args)
        obj = _select(read_file(args.path), args.top_level_key, args.path)
        tensors = flatten_tensors(obj, args.path)
        return NamedTensorRecord(tensors, args, self.settings, device)


def _plain(value, path: str):
    if isinstance(value, TensorRef):
        return value.load().tolist()
    if isinstance(value, Mapping):
        return {str(k): _plain(v, path) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, path) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise PyTorchFileError(f"{path}: a config holds a {type(value).__name__}")


def config_from_file(path, top_level_key: str | None = None) -> dict:
    """The plain dict stored in a `.pt` file (under `top_level_key`), e.g. a model's config.

    Build a config class from it with `MyConfig.from_dict(config_from_file(path, "config"))`.
    """
    obj = _select(read_file(path), top_level_key, str(path))
    if not isinstance(obj, Mapping):
        raise RecordError(f"{path}: expected a dict, the file holds a {_kind(obj)}")
    return _plain(obj, str(path))
