"""Fuzzed ONNX models: damaged bytes and lying tensor sizes give burn errors, nothing hangs.

The corpus is burn-import's committed fixtures. Each case is translated as `ModelGen` does
(read, check, passes, code generation) and the generated source is compiled; the loader must
refuse a tensor whose declared shape disagrees with the bytes stored before it allocates.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from burn.onnx.modelgen import translate

from .conftest import BYTE_MUTATORS, check

FIXTURES = Path(__file__).parents[2] / "packages" / "burn-import" / "tests" / "fixtures"
NAMES = ["mnist_net.onnx", "transformer_encoder.onnx"]
RAW = [(FIXTURES / name).read_bytes() for name in NAMES]
MODELS = [onnx.load_from_string(raw) for raw in RAW]


def load(case: bytes) -> None:
    generated = translate(case)
    compile(generated.source, "<fuzzed model>", "exec")


def _initializer_mutator(change):
    """Parse a fixture, `change` one of its initializers, and serialize it again."""

    def mutate(rng: np.random.Generator, raw: bytes) -> bytes:
        model = MODELS[RAW.index(raw)]
        copy = onnx.ModelProto()
        copy.CopyFrom(model)
        inits = copy.graph.initializer
        change(rng, inits[int(rng.integers(len(inits)))])
        return copy.SerializeToString()

    mutate.__name__ = change.__name__
    return mutate


def huge_dims(rng: np.random.Generator, tensor: onnx.TensorProto) -> None:
    """Declare a shape of up to 2**62 elements over the bytes stored."""
    del tensor.dims[:]
    tensor.dims.extend(int(d) for d in rng.choice([2**20, 2**31, 2**40, 7, 0, -1], size=3))


def wrong_length(rng: np.random.Generator, tensor: onnx.TensorProto) -> None:
    """Cut or pad the raw bytes so they no longer match the declared shape."""
    data = tensor.raw_data or np.zeros(8, np.uint8).tobytes()
    if rng.random() < 0.5:
        tensor.raw_data = data[: int(rng.integers(len(data)))]
    else:
        tensor.raw_data = data + bytes(int(rng.integers(1, 64)))


def extra_rank(rng: np.random.Generator, tensor: onnx.TensorProto) -> None:
    """Add a dimension of one (same element count, a shape the graph does not expect)."""
    tensor.dims.insert(int(rng.integers(len(tensor.dims) + 1)), 1)


CATEGORIES = {
    "onnx bytes": BYTE_MUTATORS,
    "onnx huge dims": [_initializer_mutator(huge_dims)],
    "onnx wrong lengths": [_initializer_mutator(wrong_length), _initializer_mutator(extra_rank)],
}


@pytest.mark.parametrize("category", list(CATEGORIES))
def test_fuzzed_onnx_models_give_burn_errors(fuzz, category):
    check(fuzz(category, RAW, load, CATEGORIES[category]))
