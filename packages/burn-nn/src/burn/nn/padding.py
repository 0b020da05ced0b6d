"""`PaddingConfig1d/2d/3d`: how a convolution or pool pads its input (Valid, Same, Explicit).

Saved as serde writes Burn's enums: `"Valid"`, `"Same"`, `{"Explicit": [1, 2]}` (a single
number for 1-d), so configs written by Rust Burn load here and back.

```python
from burn.nn import PaddingConfig2d
PaddingConfig2d.Same
PaddingConfig2d.Explicit(1, 2)
```
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from burn.config import ConfigError
from burn.nn._config import Variants


def same_padding(size: int, kernel: int, stride: int, dilation: int = 1) -> int:
    """Padding per side that keeps `ceil(size / stride)` outputs; symmetric, so it is exact only
    when the dilated kernel extent is odd (checked where the layer is built)."""
    out = -(-size // stride)
    extent = dilation * (kernel - 1) + 1
    return max(0, math.ceil((stride * (out - 1) + extent - size) / 2))


class _Padding(Variants):
    """Shared behaviour of the padding enums; `n` is the number of spatial dims."""

    n = 0
    _unit = True  # unit variants load from a bare string

    def to_dict(self):
        name = type(self).__name__.rsplit("_", 1)[-1]
        if isinstance(self, _Explicit):
            sizes = list(self.sizes())
            return {"Explicit": sizes[0] if self.n == 1 else sizes}
        return name

    @classmethod
    def _from_dict(cls, data, where: str):
        base = cls if "_" not in cls.__name__ else cls.__mro__[2]
        if data in ("Valid", "Same"):
            return getattr(base, data)
        if isinstance(data, dict) and list(data) == ["Explicit"]:
            sizes = data["Explicit"]
            sizes = [sizes] if isinstance(sizes, int) else sizes
            if isinstance(sizes, (list, tuple)) and len(sizes) == base.n:
                try:
                    return base.Explicit(*sizes)
                except ConfigError as e:
                    raise ConfigError(f"{where}.Explicit: {e}") from None
        return super()._from_dict(data, where)

    def resolve(self, spatial, kernel, stride, dilation) -> tuple[int, ...]:
        """Padding per spatial dim for an input of spatial sizes `spatial`."""
        raise NotImplementedError

    def is_same(self) -> bool:
        return False


class _Valid:
    def resolve(self, spatial, kernel, stride, dilation) -> tuple[int, ...]:
        return (0,) * self.n

    def __repr__(self) -> str:
        return f"{type(self).__mro__[2].__name__}.Valid"


class _Same:
    def resolve(self, spatial, kernel, stride, dilation) -> tuple[int, ...]:
        return tuple(
            same_padding(s, k, st, d)
            for s, k, st, d in zip(spatial, kernel, stride, dilation, strict=True)
        )

    def is_same(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"{type(self).__mro__[2].__name__}.Same"


class _Explicit:
    def sizes(self) -> tuple[int, ...]:
        return tuple(getattr(self, f"p{i}") for i in range(self.n))

    def resolve(self, spatial, kernel, stride, dilation) -> tuple[int, ...]:
        return self.sizes()

    def __repr__(self) -> str:
        return f"{type(self).__mro__[2].__name__}.Explicit{self.sizes()}"


def _enum(name: str, n: int) -> type:
    base = type(name, (_Padding,), {"n": n, "__doc__": f"Padding of a {n}-d conv or pool."})
    valid = dataclass(frozen=True, repr=False)(type(f"{name}_Valid", (_Valid, base), {}))
    same = dataclass(frozen=True, repr=False)(type(f"{name}_Same", (_Same, base), {}))
    fields = {f"p{i}": int for i in range(n)}
    explicit = dataclass(frozen=True, repr=False)(
        type(f"{name}_Explicit", (_Explicit, base), {"__annotations__": fields})
    )
    base.Valid = valid()
    base.Same = same()
    base.Explicit = explicit
    base._variants = {"Valid": valid, "Same": same, "Explicit": explicit}
    return base


PaddingConfig1d = _enum("PaddingConfig1d", 1)
PaddingConfig2d = _enum("PaddingConfig2d", 2)
PaddingConfig3d = _enum("PaddingConfig3d", 3)


def check_same_supported(padding: _Padding, kernel, dilation=None) -> None:
    """Same padding is symmetric here, so the dilated kernel extent must be odd (as in Burn)."""
    if not padding.is_same():
        return
    dilation = dilation or (1,) * len(kernel)
    if any((d * (k - 1)) % 2 for k, d in zip(kernel, dilation, strict=True)):
        raise ValueError(
            f"Same padding with an even kernel size is not supported (kernel {list(kernel)})"
        )
