"""Fuzzed ONNX models: damaged bytes and lying tensor sizes give burn errors, nothing hangs.

The corpus is burn-import's committed fixtures. Each case is translated as `ModelGen` does
(read, check, passes, code generation) and the generated source is compiled; the loader must
refuse a tensor whose declared shape disagrees with the bytes stored before it allocates.
"""

from __future__ import annotations

import types
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
    """Translate `case` and import the generated source (the module level runs; no forward)."""
    generated = translate(case)
    module = types.ModuleType("burn_onnx_fuzzed")
    module.__file__ = "burn_onnx_fuzzed.py"
    exec(compile(generated.source, "<fuzzed model>", "exec"), module.__dict__)


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


BREAKERS = ["\n", '"""', "#", "\r", "\x00", "\u2028", "\u0085", "\\", "class", "len"]


def hostile_names(marker: Path):
    """Rename a value everywhere it occurs, or a node or the graph, to a string carrying code."""

    def mutate(rng: np.random.Generator, raw: bytes) -> bytes:
        model = onnx.ModelProto()
        model.CopyFrom(MODELS[RAW.index(raw)])
        graph = model.graph
        breaker = BREAKERS[int(rng.integers(len(BREAKERS)))]
        bad = f"{breaker}__import__('os').system('touch {marker}'){breaker}"
        target = int(rng.integers(4))
        if target == 0:
            graph.name = bad
            graph.doc_string = bad
        elif target == 1:
            node = graph.node[int(rng.integers(len(graph.node)))]
            node.name, node.doc_string = bad, bad
        else:
            values = [i.name for i in graph.initializer] + [i.name for i in graph.input]
            values += [o for n in graph.node for o in n.output]
            old = values[int(rng.integers(len(values)))]
            new = f"{old}{bad}"
            for item in [*graph.initializer, *graph.input, *graph.output, *graph.value_info]:
                if item.name == old:
                    item.name = new
            for node in graph.node:
                node.input[:] = [new if n == old else n for n in node.input]
                node.output[:] = [new if n == old else n for n in node.output]
        return model.SerializeToString()

    return mutate


CATEGORIES = {
    "onnx bytes": BYTE_MUTATORS,
    "onnx huge dims": [_initializer_mutator(huge_dims)],
    "onnx wrong lengths": [_initializer_mutator(wrong_length), _initializer_mutator(extra_rank)],
}


@pytest.mark.parametrize("category", list(CATEGORIES))
def test_fuzzed_onnx_models_give_burn_errors(fuzz, category):
    check(fuzz(category, RAW, load, CATEGORIES[category]))


def test_fuzzed_hostile_names_never_run(fuzz, tmp_path):
    marker = tmp_path / "pwned"
    stats = fuzz("onnx hostile names", RAW, load, [hostile_names(marker)])
    check(stats)
    assert stats.loaded > 0, stats.line()  # renamed graphs stay valid and import
    assert not marker.exists()
