"""From a flat map of named tensors (a PyTorch state dict, a safetensors file) to a module record.

The tensors are named by PyTorch's conventions; the module that loads them decides how each
name maps to one of its parameters (`ModuleLayout`): a `Linear` weight is stored `[out, in]` by
PyTorch and `[in, out]` here, norms say `weight`/`bias` where ours say `gamma`/`beta`. The same
tables serve saving in PyTorch's layout, so a round trip is exact.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace

import numpy as np
from burn.module import Module, Param
from burn.nn import (
    BatchNorm,
    GroupNorm,
    InstanceNorm,
    LayerNorm,
    Linear,
    PRelu,
    RmsNorm,
)
from burn.record import DeferredRecord, ParamRecord, PrecisionSettings, RecordError, unwrap_some
from burn.record.settings import settings_class
from burn.tensor import DType, TensorData


@dataclass(frozen=True)
class LoadArgs:
    """What to load from a file of named tensors, and how to name them.

    ```python notest
    args = (
        LoadArgs("model.pt")
        .with_top_level_key("state_dict")
        .with_key_remap(r"^conv\\.(\\d+)", r"conv\\1")
        .with_debug_print()
    )
    ```

    Args:
        path: the file.
        key_remaps: `(pattern, replacement)` pairs of Python regular expressions (`re.sub`
            syntax, `\\1` for a group), applied to every key in order.
        top_level_key: load the dict stored under this key (e.g. `"state_dict"`).
        debug_print: print each key as found and as remapped, with its shape and dtype.
        allow_partial: load what matches; keep the module's own values for parameters the file
            lacks and ignore keys the module lacks (by default both are an error listing them).
    """

    path: str | os.PathLike
    key_remaps: tuple[tuple[str, str], ...] = ()
    top_level_key: str | None = None
    debug_print: bool = False
    allow_partial: bool = False

    def __post_init__(self):
        object.__setattr__(self, "path", str(self.path))

    def with_key_remap(self, pattern: str, replacement: str) -> LoadArgs:
        """Rename keys matching `pattern` (applied after the remaps added before it)."""
        try:
            re.compile(pattern)
        except re.error as e:
            raise RecordError(f"with_key_remap: invalid pattern {pattern!r} ({e})") from None
        return replace(self, key_remaps=(*self.key_remaps, (pattern, replacement)))

    def with_top_level_key(self, key: str) -> LoadArgs:
        """Load the dict stored under `key` of the file's top-level dict."""
        return replace(self, top_level_key=key)

    def with_debug_print(self) -> LoadArgs:
        """Print the keys (original and remapped) with shapes and dtypes while loading."""
        return replace(self, debug_print=True)

    def with_partial(self, allow: bool = True) -> LoadArgs:
        """Allow keys the module lacks and parameters the file lacks."""
        return replace(self, allow_partial=allow)


# ---------------------------------------------------------------------------- layouts
def _transpose(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array.T)


@dataclass(frozen=True)
class ModuleLayout:
    """How one module type names and lays out its parameters in PyTorch files.

    Attributes:
        names: our field -> PyTorch's name (fields not listed keep their name).
        load: our field -> a function turning PyTorch's array into ours.
        save: our field -> the inverse, used when saving in PyTorch's layout.
        ignored: PyTorch keys of this module that have no parameter here (dropped quietly).
        hint: our field -> advice added to a shape mismatch.
    """

    names: Mapping[str, str] = field(default_factory=dict)
    load: Mapping[str, Callable[[np.ndarray], np.ndarray]] = field(default_factory=dict)
    save: Mapping[str, Callable[[np.ndarray], np.ndarray]] = field(default_factory=dict)
    ignored: frozenset[str] = frozenset()
    hint: Mapping[str, str] = field(default_factory=dict)


_NORM = ModuleLayout(names={"gamma": "weight", "beta": "bias"})
_PLAIN = ModuleLayout()

LAYOUTS: dict[type, ModuleLayout] = {
    Linear: ModuleLayout(
        load={"weight": _transpose},
        save={"weight": _transpose},
        hint={"weight": "PyTorch stores [d_output, d_input]; it is transposed on load"},
    ),
    BatchNorm: ModuleLayout(
        names={"gamma": "weight", "beta": "bias"}, ignored=frozenset({"num_batches_tracked"})
    ),
    LayerNorm: _NORM,
    GroupNorm: _NORM,
    InstanceNorm: _NORM,
    RmsNorm: ModuleLayout(names={"gamma": "weight"}),
    PRelu: ModuleLayout(names={"alpha": "weight"}),
}
"""Module type -> its PyTorch layout; types not listed (convolutions, embeddings) keep ours."""


def layout_of(module: Module) -> ModuleLayout:
    for cls in type(module).__mro__:
        found = LAYOUTS.get(cls)
        if found is not None:
            return found
    return _PLAIN


@dataclass
class Slot:
    """One parameter of the module: its path, the module owning it, and its file name."""

    path: str
    param: Param
    owner: Module | None
    field: str
    key: str  # the name in the file (PyTorch's layout) or our path


def module_slots(module: Module, pytorch_layout: bool = True) -> list[Slot]:
    """Every parameter of `module` with the key it has in a file of the chosen layout."""
    found: list[Slot] = []

    def walk(value, path: str, owner, name: str) -> None:
        if isinstance(value, Param):
            key = path
            if pytorch_layout and owner is not None:
                torch_name = layout_of(owner).names.get(name, name)
                key = path[: len(path) - len(name)] + torch_name
            found.append(Slot(path, value, owner, name, key))
        elif isinstance(value, Module):
            for child, item in value.fields():
                walk(item, f"{path}.{child}" if path else child, value, child)
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                walk(item, f"{path}.{i}", owner, str(i))
        elif isinstance(value, dict):
            for k, item in value.items():
                walk(item, f"{path}.{k}", owner, str(k))

    walk(module, "", None, "")
    return found


# ---------------------------------------------------------------------------- named tensors
class NamedTensor:
    """A tensor of a file by name: shape and dtype known, values read on demand."""

    __slots__ = ("shape", "dtype", "_read")

    def __init__(self, shape, dtype: DType, read: Callable[[], np.ndarray]):
        self.shape = tuple(shape)
        self.dtype = dtype
        self._read = read

    def read(self) -> np.ndarray:
        return self._read()


def remap_keys(
    tensors: Mapping[str, NamedTensor], args: LoadArgs
) -> dict[str, tuple[str, NamedTensor]]:
    """`remapped key -> (original key, tensor)`, printing both when `args.debug_print`."""
    out: dict[str, tuple[str, NamedTensor]] = {}
    rows = []
    for original, tensor in tensors.items():
        key = original
        for pattern, replacement in args.key_remaps:
            try:
                key = re.sub(pattern, replacement, key)
            except (re.error, IndexError) as e:
                raise RecordError(
                    f"{args.path}: remapping {key!r} with ({pattern!r}, {replacement!r}) "
                    f"failed ({e})"
                ) from None
        if key in out:
            raise RecordError(
                f"{args.path}: keys {out[key][0]!r} and {original!r} both remap to {key!r}"
            )
        out[key] = (original, tensor)
        rows.append((original, key, tensor))
    if args.debug_print:
        print(f"Tensors in {args.path} ({len(rows)}):")
        for original, key, tensor in rows:
            arrow = f" -> {key}" if key != original else ""
            print(f"  {original}{arrow}  {list(tensor.shape)} {tensor.dtype.value}")
    return out


class NamedTensorRecord(DeferredRecord):
    """Named tensors waiting for the module that loads them (see `DeferredRecord`).

    `model.load_record(record)` maps each of the module's parameters to a key, adapts the
    layout, converts the dtype per the precision settings, and raises one `RecordError` listing
    every parameter the file lacks and every key the module lacks (unless `allow_partial`).
    """

    def __init__(
        self,
        tensors: Mapping[str, NamedTensor],
        args: LoadArgs,
        settings: type[PrecisionSettings] | PrecisionSettings,
        device=None,
        pytorch_layout: bool = True,
    ):
        self.args = args
        self.settings = settings_class(settings)
        self.device = device
        self.pytorch_layout = pytorch_layout
        self.tensors = remap_keys(tensors, args)

    def keys(self) -> list[str]:
        """The keys after remapping, in file order."""
        return list(self.tensors)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.args.path!r}, {len(self.tensors)} tensors)"

    def resolve(self, module) -> dict | None:
        slots = module_slots(module, self.pytorch_layout)
        values: dict[str, TensorData] = {}
        used: set[str] = set()
        missing: list[str] = []
        for slot in slots:
            entry = self.tensors.get(slot.key)
            if entry is None:
                missing.append(slot.key)
                continue
            used.add(slot.key)
            values[slot.path] = self._convert(slot, entry)
        ignorable = self._ignorable(slots)
        unused = [k for k in self.tensors if k not in used and k not in ignorable]
        if (missing or unused) and not self.args.allow_partial:
            parts = []
            if missing:
                parts.append(f"the file lacks {len(missing)} parameter(s) {_shorten(missing)}")
            if unused:
                parts.append(f"the module lacks {len(unused)} key(s) {_shorten(unused)}")
            raise RecordError(
                f"{self.args.path}: {'; '.join(parts)} (remap keys with "
                "LoadArgs.with_key_remap, or load what matches with LoadArgs.with_partial())"
            )
        return _fill(module, module.record_schema(), "", values)

    def _ignorable(self, slots: Iterable[Slot]) -> set[str]:
        out = set()
        for slot in slots:
            if slot.owner is None or not self.pytorch_layout:
                continue
            prefix = slot.key[: len(slot.key) - len(slot.key.rsplit(".", 1)[-1])]
            out.update(prefix + name for name in layout_of(slot.owner).ignored)
        return out

    def _convert(self, slot: Slot, entry: tuple[str, NamedTensor]) -> TensorData:
        original, tensor = entry
        layout = layout_of(slot.owner) if slot.owner is not None and self.pytorch_layout else None
        adapt = layout.load.get(slot.field) if layout is not None else None
        shape = tuple(tensor.shape)
        if adapt is not None:
            shape = tuple(reversed(shape)) if len(shape) == 2 else shape
        expected = tuple(slot.param.dims())
        if shape != expected:
            hint = layout.hint.get(slot.field) if layout is not None else None
            owner = type(slot.owner).__name__ if slot.owner is not None else "module"
            raise RecordError(
                f"{self.args.path}: key {original!r} has shape {list(tensor.shape)}, the "
                f"{owner} parameter {slot.path!r} needs {list(expected)}"
                + (f" ({hint})" if hint and adapt is not None else "")
            )
        array = tensor.read()
        if adapt is not None:
            array = adapt(array)
        return self.settings.apply(TensorData(array))


def _shorten(keys: list[str], limit: int = 12) -> str:
    shown = ", ".join(repr(k) for k in keys[:limit])
    return f"[{shown}{', ...' if len(keys) > limit else ''}]"


def _fill(value, node, path: str, values: dict[str, TensorData]):
    """The module's record schema with the file's values (or the module's own) filled in."""
    node = unwrap_some(node)
    if isinstance(value, Param):
        data = values.get(path)
        if data is None:
            data = value.val().to_data()
        return ParamRecord(node.id, data)
    if isinstance(value, Module):
        if node is None:
            return None
        return {
            name: _fill(item, node[name], f"{path}.{name}" if path else name, values)
            for name, item in value.fields()
        }
    if isinstance(value, (list, tuple)) and isinstance(node, (list, tuple)):
        items = [
            _fill(v, n, f"{path}.{i}", values)
            for i, (v, n) in enumerate(zip(value, node, strict=True))
        ]
        return items if isinstance(node, list) else tuple(items)
    if isinstance(value, dict) and isinstance(node, dict):
        return {str(k): _fill(v, node[str(k)], f"{path}.{k}", values) for k, v in value.items()}
    return node
