"""`Initializer`: how a layer's parameters get their first values (Burn's variants).

Kaiming and Xavier scale the spread by the layer's fan (inputs and outputs per unit), which the
layer passes to `init`; the others ignore it.

```python
from burn.nn import Initializer
w = Initializer.KaimingUniform(gain=1 / 3**0.5).init([64, 32], fan_in=64)
```
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from burn.nn._config import Variants
from burn.tensor import Distribution, Tensor


class Initializer(Variants):
    """Base of the variants; `init(shape, device, fan_in, fan_out)` draws a Float tensor.

    Initializers are config values: a layer config holding one saves it as JSON
    (`{"KaimingUniform": {"gain": 0.577, "fan_out_only": false}}`) and loads it back.
    """

    def init(
        self, shape, device=None, fan_in: int | None = None, fan_out: int | None = None, dtype=None
    ) -> Tensor:
        raise NotImplementedError

    def init_with(
        self, shape, fan_in: int | None, fan_out: int | None, device=None, dtype=None
    ) -> Tensor:
        """Burn's argument order: `init_with(shape, fan_in, fan_out, device)`."""
        return self.init(shape, device, fan_in, fan_out, dtype)

    def __call__(
        self, shape, device=None, fan_in: int | None = None, fan_out: int | None = None, dtype=None
    ) -> Tensor:
        return self.init(shape, device, fan_in, fan_out, dtype)


@dataclass(frozen=True)
class Constant(Initializer):
    """Every value is `value`."""

    value: float

    def init(self, shape, device=None, fan_in=None, fan_out=None, dtype=None) -> Tensor:
        return Tensor.full(shape, float(self.value), device, dtype)


@dataclass(frozen=True)
class Ones(Initializer):
    """Every value is 1 (norm layers' scale)."""

    def init(self, shape, device=None, fan_in=None, fan_out=None, dtype=None) -> Tensor:
        return Tensor.ones(shape, device, dtype)


@dataclass(frozen=True)
class Zeros(Initializer):
    """Every value is 0 (biases, norm layers' shift)."""

    def init(self, shape, device=None, fan_in=None, fan_out=None, dtype=None) -> Tensor:
        return Tensor.zeros(shape, device, dtype)


@dataclass(frozen=True)
class Uniform(Initializer):
    """Uniform on [min, max)."""

    min: float
    max: float

    def init(self, shape, device=None, fan_in=None, fan_out=None, dtype=None) -> Tensor:
        return Tensor.random(
            shape, Distribution.Uniform(float(self.min), float(self.max)), device, dtype
        )


@dataclass(frozen=True)
class Normal(Initializer):
    """Gaussian with the given mean and standard deviation."""

    mean: float
    std: float

    def init(self, shape, device=None, fan_in=None, fan_out=None, dtype=None) -> Tensor:
        return Tensor.random(
            shape, Distribution.Normal(float(self.mean), float(self.std)), device, dtype
        )


def _fan(name: str, fan: int | None, which: str) -> int:
    if fan is None:
        raise ValueError(
            f"{name} needs the {which} of the layer: init(shape, device, fan_in=..., fan_out=...)"
        )
    if fan <= 0:
        raise ValueError(f"{name}: {which} must be positive, got {fan}")
    return int(fan)


def _kaiming_std(name: str, gain: float, fan_out_only: bool, fan_in, fan_out) -> float:
    fan = _fan(name, fan_out, "fan_out") if fan_out_only else _fan(name, fan_in, "fan_in")
    return gain / math.sqrt(fan)


def _xavier_std(name: str, gain: float, fan_in, fan_out) -> float:
    total = _fan(name, fan_in, "fan_in") + _fan(name, fan_out, "fan_out")
    return gain * math.sqrt(2.0 / total)


@dataclass(frozen=True)
class KaimingUniform(Initializer):
    """Uniform on [-a, a] with a = gain * sqrt(3 / fan): variance gain^2 / fan (He et al.).

    `fan` is fan_in, or fan_out when `fan_out_only`. `gain = sqrt(2)` suits relu layers;
    Burn's Linear uses gain 1/sqrt(3), i.e. bound 1/sqrt(fan_in), PyTorch's Linear default.
    """

    gain: float = 1.0
    fan_out_only: bool = False

    def init(self, shape, device=None, fan_in=None, fan_out=None, dtype=None) -> Tensor:
        bound = math.sqrt(3.0) * _kaiming_std(
            "KaimingUniform", self.gain, self.fan_out_only, fan_in, fan_out
        )
        return Tensor.random(shape, Distribution.Uniform(-bound, bound), device, dtype)


@dataclass(frozen=True)
class KaimingNormal(Initializer):
    """Gaussian with std = gain / sqrt(fan), fan as in `KaimingUniform`."""

    gain: float = 1.0
    fan_out_only: bool = False

    def init(self, shape, device=None, fan_in=None, fan_out=None, dtype=None) -> Tensor:
        std = _kaiming_std("KaimingNormal", self.gain, self.fan_out_only, fan_in, fan_out)
        return Tensor.random(shape, Distribution.Normal(0.0, std), device, dtype)


@dataclass(frozen=True)
class XavierUniform(Initializer):
    """Uniform on [-a, a] with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio)."""

    gain: float = 1.0

    def init(self, shape, device=None, fan_in=None, fan_out=None, dtype=None) -> Tensor:
        bound = math.sqrt(3.0) * _xavier_std("XavierUniform", self.gain, fan_in, fan_out)
        return Tensor.random(shape, Distribution.Uniform(-bound, bound), device, dtype)


@dataclass(frozen=True)
class XavierNormal(Initializer):
    """Gaussian with std = gain * sqrt(2 / (fan_in + fan_out))."""

    gain: float = 1.0

    def init(self, shape, device=None, fan_in=None, fan_out=None, dtype=None) -> Tensor:
        std = _xavier_std("XavierNormal", self.gain, fan_in, fan_out)
        return Tensor.random(shape, Distribution.Normal(0.0, std), device, dtype)


Initializer._variants = {
    cls.__name__: cls
    for cls in (
        Constant,
        Ones,
        Zeros,
        Uniform,
        Normal,
        KaimingUniform,
        KaimingNormal,
        XavierUniform,
        XavierNormal,
    )
}
Initializer.Constant = Constant
Initializer.Ones = Ones()
Initializer.Zeros = Zeros()
Initializer.Uniform = Uniform
Initializer.Normal = Normal
Initializer.KaimingUniform = KaimingUniform
Initializer.KaimingNormal = KaimingNormal
Initializer.XavierUniform = XavierUniform
Initializer.XavierNormal = XavierNormal
