"""Random distributions for `Tensor.random`, mirroring Burn's `Distribution` enum."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np


class Distribution:
    """Where random values come from. `Distribution.Default` is uniform on [0, 1)."""

    if TYPE_CHECKING:
        # Set after the subclasses below, as Burn spells them; declared for type checkers.
        Uniform: ClassVar[type[Uniform]]
        Normal: ClassVar[type[Normal]]
        Bernoulli: ClassVar[type[Bernoulli]]
        Default: ClassVar[Distribution]

    def sample(self, rng: np.random.Generator, shape: Any) -> np.ndarray:
        """Draw float64 samples on the host; backends may draw on their device instead."""
        raise NotImplementedError


@dataclass(frozen=True)
class Uniform(Distribution):
    """Uniform on [low, high)."""

    low: float
    high: float

    def sample(self, rng: Any, shape: Any) -> Any:
        return rng.uniform(self.low, self.high, size=shape)


@dataclass(frozen=True)
class Normal(Distribution):
    """Gaussian with the given mean and standard deviation."""

    mean: float
    std: float

    def sample(self, rng: Any, shape: Any) -> Any:
        return rng.normal(self.mean, self.std, size=shape)


@dataclass(frozen=True)
class Bernoulli(Distribution):
    """1 with probability `prob`, else 0."""

    prob: float

    def sample(self, rng: Any, shape: Any) -> Any:
        return (rng.random(size=shape) < self.prob).astype(np.float64)


@dataclass(frozen=True)
class _Default(Distribution):
    def sample(self, rng: Any, shape: Any) -> Any:
        return rng.random(size=shape)

    def __repr__(self) -> str:
        return "Distribution.Default"


# Burn's spelling: `Distribution.Uniform(lo, hi)`, `Distribution.Default`.
Distribution.Uniform = Uniform
Distribution.Normal = Normal
Distribution.Bernoulli = Bernoulli
Distribution.Default = _Default()
