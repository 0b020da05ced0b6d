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


MAX_DEPTH = 100
MAX_REVISITS = 10_000


class _Budget:
    """Bounds a walk of the unpickled tree.

    A pickle can share one container many times (60 dicts, each holding the next twice, make
    2**60 paths) or put a container inside itself; neither is a weight file. Containers seen
    for the first time cost nothing (the file's size bounds them); visits to one seen before
    are counted.
    """

    def __init__(self, path: str):
        self.path = path
        self.revisits = 0
        self.seen: set[int] = set()
        self.active: set[int] = set()

    def enter(self, value, key: str, depth: int) -> None:
        if id(value) in self.active:
            raise PyTorchFileError(f"{self.path}: the pickled object contains itself at {key!r}")
        if id(value) in self.seen:
            self.revisits += 1
        self.seen.add(id(value))
        if depth > MAX_DEPTH or self.revisits > MAX_REVISITS:
            raise PyTorchFileError(
                f"{self.path}: the pickled object nests or repeats too much (at {key!r}): "
                "not a weight file"
            )
        self.active.add(id(value))

    def leave(self, value) -> None:
        self.active.discard(id(value))


def flatten_tensors(obj, path: str) -> dict[str, NamedTensor]:
    """Tensors of nested dicts and lists by dotted key (`encoder.layers.0.weight`).

    Values that are not tensors (epoch counters, config dicts) are skipped.
    """
    if not isinstance(obj, (Mapping, list, tuple)):
        raise RecordError(f"{path}: expected a dict of tensors, the file holds a {_kind(obj)}")
    out: dict[str, NamedTensor] = {}
    budget = _Budget(path)

    def walk(value, key: str, depth: int) -> None:
        if isinstance(value, TensorRef):
            out[key] = NamedTensor(value.shape, value.dtype, value.load)
            return
        if not isinstance(value, (Mapping, list, tuple)):
            return
        budget.enter(value, key, depth)
        items = value.items() if isinstance(value, Mapping) else enumerate(value)
        for k, v in items:
            walk(v, f"{key}.{k}" if key else str(k), depth + 1)
        budget.leave(value)

    walk(obj, "", 0)
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


def _plain(value, budget: _Budget, key: str = "", depth: int = 0):
    if isinstance(value, TensorRef):
        return value.load().tolist()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if not isinstance(value, (Mapping, list, tuple)):
        raise PyTorchFileError(f"{budget.path}: a config holds a {type(value).__name__}")
    budget.enter(value, key, depth)
    if isinstance(value, Mapping):
        out = {str(k): _plain(v, budget, f"{key}.{k}", depth + 1) for k, v in value.items()}
    else:
        out = [_plain(v, budget, f"{key}.{i}", depth + 1) for i, v in enumerate(value)]
    budget.leave(value)
    return out


def config_from_file(path, top_level_key: str | None = None) -> dict:
    """The plain dict stored in a `.pt` file (under `top_level_key`), e.g. a model's config.

    Build a config class from it with `MyConfig.from_dict(config_from_file(path, "config"))`.
    """
    obj = _select(read_file(path), top_level_key, str(path))
    if not isinstance(obj, Mapping):
        raise RecordError(f"{path}: expected a dict, the file holds a {_kind(obj)}")
    return _plain(obj, _Budget(str(path)))
