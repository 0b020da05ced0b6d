"""Fuzzed record files of all six formats: every failure is a burn error, nothing hangs."""

from __future__ import annotations

import gzip
import json
import zlib

import msgpack
import pytest
from burn.backend import NdArray
from burn.module import Module, Param
from burn.nn import LinearConfig
from burn.record import (
    BinFileRecorder,
    BinGzFileRecorder,
    JsonGzFileRecorder,
    NamedMpkFileRecorder,
    NamedMpkGzFileRecorder,
    PrettyJsonFileRecorder,
)
from burn.tensor import Int, Tensor

from .conftest import BYTE_MUTATORS, check, flip_bits, mutate_tree


class Net(Module):
    """Parameters of three dtypes, a list, a dict and an absent optional field."""

    def __init__(self, device) -> None:
        self.first = LinearConfig(4, 3).init(device)
        self.blocks = [LinearConfig(3, 3, bias=False).init(device) for _ in range(2)]
        self.heads = {"a": LinearConfig(3, 2).init(device)}
        self.table = Param(Tensor[2, Int].from_data([[1, 2], [3, 4]], device))
        self.skip = None


RECORDERS = {
    "mpk": NamedMpkFileRecorder(),
    "mpk.gz": NamedMpkGzFileRecorder(),
    "bin": BinFileRecorder(),
    "bin.gz": BinGzFileRecorder(),
    "json": PrettyJsonFileRecorder(),
    "json.gz": JsonGzFileRecorder(),
}


def _tree_mutator(layout: str, compressed: bool):
    """Mutate the decoded tree (named layouts) and encode it again."""

    def mutate(rng, raw: bytes) -> bytes:
        plain = gzip.decompress(raw) if compressed else raw
        try:
            if layout == "json":
                tree = json.loads(plain)
                out = json.dumps(mutate_tree(rng, tree)).encode()
            else:
                tree = msgpack.unpackb(plain, raw=False)
                out = msgpack.packb(mutate_tree(rng, tree), use_bin_type=True)
        except (OverflowError, TypeError, ValueError, RecursionError):
            out = flip_bits(rng, plain)  # a value the encoder cannot write
        return gzip.compress(out, 1) if compressed else out

    return mutate


def _inner_bytes_mutator(compressed: bool):
    """Byte mutations of the uncompressed content, compressed again (reaches the decoder)."""

    def mutate(rng, raw: bytes) -> bytes:
        plain = gzip.decompress(raw)
        bad = BYTE_MUTATORS[int(rng.integers(len(BYTE_MUTATORS)))](rng, plain)
        return gzip.compress(bad, 1)

    return mutate


def _bomb(rng, raw: bytes) -> bytes:
    """A compressed stream of a plausible head and megabytes of zeros or repeats."""
    compressor = zlib.compressobj(1, zlib.DEFLATED, 31)
    parts = [compressor.compress(gzip.decompress(raw)[: int(rng.integers(1, 64))])]
    block = bytes(1 << 20)
    parts += [compressor.compress(block) for _ in range(int(rng.integers(1, 16)))]
    return b"".join(parts) + compressor.flush()


@pytest.mark.parametrize("ext", list(RECORDERS))
def test_fuzzed_records_give_burn_errors_only(ext, fuzz):
    device = NdArray.device()
    module = Net(device)
    schema = module.record_schema()
    recorder = RECORDERS[ext]
    corpus = [b"".join(recorder.encode(module.into_record()))]
    mutators = list(BYTE_MUTATORS)
    if recorder.layout != "bin":
        mutators += [_tree_mutator(recorder.layout, recorder.compressed)] * 4
    if recorder.compressed:
        mutators += [_inner_bytes_mutator(True)] * 3 + [_bomb]

    def load(raw: bytes) -> None:
        record = recorder.decode(raw, schema, f"fuzz.{ext}")
        module.load_record(record, device=device)

    stats = fuzz(f"record .{ext}", corpus, load, mutators)
    check(stats)
