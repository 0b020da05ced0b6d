"""A per-shape choice between algorithms that compute the same op, made by timing them.

Which convolution algorithm wins depends on the shape (channel counts, batch, grid size) and on
the BLAS the machine has, so instead of guessing, the first call of an op with a new key runs
every candidate three times, in rounds over all of them (so that a busy spell on a shared
machine slows every candidate alike, and the best of three resists the rest of the noise),
returns the fastest one's result from its first run and remembers it; later calls with that
key run only the winner. Like Wgpu's autotune, the choice lives for the process.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import TypeVar

T = TypeVar("T")

_TIMED_RUNS = 3
_MAX_KEYS = 4096  # a bound, so that a stream of ever-new shapes cannot grow the table forever


class Autotune:
    """Remembers, per key, which of several equivalent candidates ran fastest."""

    def __init__(self) -> None:
        self._winners: dict[Hashable, int] = {}
        self._lock = threading.Lock()

    def run(self, key: Hashable, candidates: list[Callable[[], T]]) -> T:
        """The result of the fastest candidate for `key` (timing them all the first time)."""
        if len(candidates) == 1:
            return candidates[0]()
        winner = self._winners.get(key)
        if winner is not None:
            return candidates[winner]()
        results: list[T] = []
        best: list[float] = []
        for candidate in candidates:  # the first run of each keeps its result
            start = time.perf_counter()
            results.append(candidate())
            best.append(time.perf_counter() - start)
        for _ in range(_TIMED_RUNS - 1):  # then rounds over all, so a busy spell hits them alike
            for i, candidate in enumerate(candidates):
                start = time.perf_counter()
                candidate()
                best[i] = min(best[i], time.perf_counter() - start)
        winner = min(range(len(candidates)), key=best.__getitem__)
        with self._lock:
            if len(self._winners) >= _MAX_KEYS:
                self._winners.clear()
            self._winners[key] = winner
        return results[winner]

    def winner(self, key: Hashable) -> int | None:
        """The index of the candidate chosen for `key`, or None before its first call."""
        return self._winners.get(key)


CONV_AUTOTUNE = Autotune()
RECURRENT_AUTOTUNE = Autotune()
