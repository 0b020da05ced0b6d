"""A small seeded fuzzer for the loaders: mutate valid inputs, load them, count the outcomes.

Each format's test gets `fuzz(name, corpus, load, mutators)`: it draws cases for a few seconds
(`BURN_FUZZ_SECONDS`, default 2 per format; `BURN_FUZZ_SEED` picks another seed), and fails on
any exception that is not a burn error, any case that runs longer than `HANG_S`, or a peak of
traced memory over `MEMORY_LIMIT`. With `-s` it prints one line per format:

    BURN_FUZZ_SECONDS=60 uv run pytest tests/fuzz -s -q
"""

from __future__ import annotations

import dataclasses
import os
import signal
import time
import traceback
import tracemalloc
from collections.abc import Callable, Sequence

import numpy as np
import pytest
from burn.tensor import BurnError

HANG_S = 5.0
MEMORY_LIMIT = 256 << 20


class Hang(BaseException):
    """Raised by the alarm in a case that runs past `HANG_S` (a BaseException: loaders must not
    be able to swallow it)."""


@dataclasses.dataclass
class FuzzStats:
    name: str
    cases: int = 0
    burn_errors: int = 0
    loaded: int = 0
    hangs: int = 0
    peak_bytes: int = 0
    others: list = dataclasses.field(default_factory=list)

    def line(self) -> str:
        return (
            f"[fuzz] {self.name}: {self.cases} cases, {self.burn_errors} burn errors, "
            f"{self.loaded} loaded, {len(self.others)} other exceptions, {self.hangs} hangs, "
            f"peak traced memory {self.peak_bytes / 2**20:.1f} MiB "
            f"(limit {MEMORY_LIMIT / 2**20:.0f} MiB)"
        )


# ------------------------------------------------------------------------------ byte mutators
INTERESTING = [0, 1, 0x7F, 0x80, 0xFF, 0xFE, 0xC1, 0xDC, 0xDD, 0xDE, 0xDF, 0xFB, 0xFC, 0xFD]


def flip_bits(rng: np.random.Generator, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(int(rng.integers(1, 9))):
        i = int(rng.integers(len(out)))
        out[i] ^= 1 << int(rng.integers(8))
    return bytes(out)


def set_bytes(rng: np.random.Generator, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(int(rng.integers(1, 5))):
        out[int(rng.integers(len(out)))] = INTERESTING[int(rng.integers(len(INTERESTING)))]
    return bytes(out)


def truncate(rng: np.random.Generator, data: bytes) -> bytes:
    return data[: int(rng.integers(len(data)))]


def insert_junk(rng: np.random.Generator, data: bytes) -> bytes:
    i = int(rng.integers(len(data) + 1))
    junk = rng.integers(0, 256, int(rng.integers(1, 64)), dtype=np.uint8).tobytes()
    return data[:i] + junk + data[i:]


def big_number(rng: np.random.Generator, data: bytes) -> bytes:
    """Overwrite a window with a large little- or big-endian integer (a length, a count)."""
    width = int(rng.choice([2, 4, 8]))
    i = int(rng.integers(max(1, len(data) - width)))
    value = int(rng.choice([2**31 - 1, 2**32 - 1, 2**63 - 1, 2**64 - 1, 2**16]))
    order = "little" if rng.random() < 0.5 else "big"
    raw = (value % (1 << (8 * width))).to_bytes(width, order)
    return data[:i] + raw + data[i + width :]


def duplicate(rng: np.random.Generator, data: bytes) -> bytes:
    i = int(rng.integers(len(data)))
    j = min(len(data), i + int(rng.integers(1, 256)))
    return data[:j] + data[i:j] + data[j:]


BYTE_MUTATORS = [flip_bits, set_bytes, truncate, insert_junk, big_number, duplicate]


# ------------------------------------------------------------------------------ tree mutators
def hostile_value(rng: np.random.Generator):
    """A value a well-formed file would never hold where the mutator puts it."""
    choice = int(rng.integers(16))
    if choice == 0:
        return -1
    if choice == 1:
        return 2**64 - 1
    if choice == 2:
        return [1] * int(rng.integers(33, 100))  # a shape of too many dims
    if choice == 3:
        return [2**40, 2**40, 0]
    if choice == 4:
        nested: object = 0
        for _ in range(int(rng.integers(100, 400))):
            nested = [nested]
        return nested
    if choice == 5:
        return {b"bytes-key": 1, "str-key": 2}
    if choice == 6:
        return "F32" if rng.random() < 0.5 else "Q4"
    if choice == 7:
        return None
    if choice == 8:
        return float("nan") if rng.random() < 0.5 else float("inf")
    if choice == 9:
        return b"\x00" * int(rng.integers(0, 64))
    if choice == 10:
        return {"bytes": b"\0" * 4, "shape": [1], "dtype": "F32"}
    if choice == 11:
        return {"id": "x", "param": {"bytes": b"", "shape": [0, 2**62], "dtype": "F64"}}
    if choice == 12:
        return True
    if choice == 13:
        return "x" * int(rng.integers(0, 200))
    if choice == 14:
        return {}
    return 10 ** int(rng.integers(20, 5000)) if rng.random() < 0.1 else 3.5


def mutate_tree(rng: np.random.Generator, tree):
    """`tree` with one node (at any depth) replaced, dropped or given an extra key."""
    tree = _copy(tree)
    paths = list(_paths(tree, ()))
    path = paths[int(rng.integers(len(paths)))]
    parent = _get(tree, path[:-1]) if path else None
    action = rng.random()
    if not path:
        return hostile_value(rng)
    key = path[-1]
    if action < 0.6:
        parent[key] = hostile_value(rng)
    elif action < 0.8 and isinstance(parent, dict):
        del parent[key]
    elif isinstance(parent, dict):
        parent["extra" + str(int(rng.integers(100)))] = hostile_value(rng)
    elif isinstance(parent, list):
        parent.append(hostile_value(rng))
    return tree


def _copy(node):
    if isinstance(node, dict):
        return {k: _copy(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_copy(v) for v in node]
    return node


def _paths(node, prefix):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node[:20]):
            yield from _paths(v, (*prefix, i))


def _get(node, path):
    for key in path:
        node = node[key]
    return node


# ------------------------------------------------------------------------------ the runner
def _seconds() -> float:
    return float(os.environ.get("BURN_FUZZ_SECONDS", "2"))


def _alarm(signum, frame):
    raise Hang()


def run_fuzz(
    name: str,
    corpus: Sequence,
    load: Callable[[object], object],
    mutators: Sequence[Callable],
    *,
    seed: int | None = None,
    seconds: float | None = None,
) -> FuzzStats:
    """Mutate items of `corpus` with `mutators` and `load` each result, for `seconds`."""
    seed = int(os.environ.get("BURN_FUZZ_SEED", "0")) if seed is None else seed
    rng = np.random.default_rng([seed, sum(name.encode())])
    budget = _seconds() if seconds is None else seconds
    stats = FuzzStats(name)
    previous = signal.signal(signal.SIGALRM, _alarm)
    tracemalloc.start()
    deadline = time.monotonic() + budget
    try:
        while time.monotonic() < deadline:
            base = corpus[int(rng.integers(len(corpus)))]
            case = mutators[int(rng.integers(len(mutators)))](rng, base)
            stats.cases += 1
            tracemalloc.reset_peak()  # what the load allocates, not what the mutator did
            signal.setitimer(signal.ITIMER_REAL, HANG_S)
            try:
                load(case)
                stats.loaded += 1
            except Hang:
                stats.hangs += 1
            except BurnError:
                stats.burn_errors += 1
            except Exception as e:
                if len(stats.others) < 5:
                    stats.others.append("".join(traceback.format_exception(e))[-1500:])
                else:
                    stats.others.append(type(e).__name__)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                stats.peak_bytes = max(stats.peak_bytes, tracemalloc.get_traced_memory()[1])
    finally:
        tracemalloc.stop()
        signal.signal(signal.SIGALRM, previous)
    print("\n" + stats.line())
    return stats


def check(stats: FuzzStats) -> None:
    assert not stats.others, f"{stats.line()}\n" + "\n".join(stats.others[:5])
    assert stats.hangs == 0, stats.line()
    assert stats.peak_bytes < MEMORY_LIMIT, stats.line()
    assert stats.cases >= 20, stats.line()  # the budget bought a useful number of cases


@pytest.fixture
def fuzz():
    if not hasattr(signal, "SIGALRM"):
        pytest.skip("the hang detector needs SIGALRM")
    return run_fuzz
