"""Run onnx's node test suite through burn.onnx.backend and rewrite the exclusion file.

    uv run python tools/onnx_node_exclusions.py

Every node test that fails is written to packages/burn-import/tests/onnx_node_exclusions.txt
with the reason (one line each: `test_name  # reason`), and a summary by reason is printed.
The pytest suite (packages/burn-import/tests/test_onnx_node_suite.py) runs every test not in
that file, so a test that starts passing should be removed from it by running this again.
"""

from __future__ import annotations

import collections
import re
import signal
import sys
import time
import warnings
from pathlib import Path

import burn.onnx.backend as backend
import onnx
from burn.onnx.errors import UnsupportedOpsError
from onnx import numpy_helper
from onnx.backend.test.loader import load_model_tests
from onnx.backend.test.runner import Runner

OUT = Path(__file__).resolve().parent.parent / "packages/burn-import/tests/onnx_node_exclusions.txt"


class _Timeout(Exception):
    pass


def _alarm(*_):
    raise _Timeout()


# What is known about particular failures, more precise than the exception says.
# Tests of random ops: their expected output comes from numpy's generator, so a pass is a
# coincidence (a few Bernoulli draws can match) and they are listed whatever happens (a dropout
# of ratio 0 draws nothing and is run).
RANDOM = {
    r"test_bernoulli": "random values: the expected output comes from numpy's generator, burn "
    "draws from the backend's",
    r"test_training_dropout(?!_zero_ratio)": "random mask: the expected output comes from "
    "numpy's generator",
}
# Reasons for failures understood and left as they are.
KNOWN = {
    r"test_dft_inverse": "the expected output holds float32 rounding noise (about 2e-7) where the "
    "exact value, which burn computes, is 0; the test's atol is 1e-7",
    r"test_loop16_seq_none": "a 0-d tensor inside a sequence comes back with one dim (burn "
    "tensors have at least one; the graph gives no rank for sequence elements)",
}


def _array(item):
    """The runner's inputs may be TensorProtos; it compares numpy arrays (as the suite does)."""
    return numpy_helper.to_array(item) if isinstance(item, onnx.TensorProto) else item


def reason_of(error: BaseException) -> str:
    """A short reason for a failure, grouped into a few kinds."""
    text = str(error).strip().splitlines()
    first = text[0] if text else ""
    if isinstance(error, _Timeout):
        return "too slow: over 10 s"
    if isinstance(error, UnsupportedOpsError):
        ops = ", ".join(sorted(error.unsupported))
        return f"unsupported op: {ops}"
    if isinstance(error, AssertionError):
        return "numeric or shape mismatch with the expected output"
    if "dtype" in first or "element type" in first or "object" in first:
        return "element type burn does not compute in"
    first = re.sub(r"test_\w+", "", first)
    return f"error: {type(error).__name__}: {first[:120]}"


def main() -> None:
    warnings.simplefilter("ignore")
    signal.signal(signal.SIGALRM, _alarm)
    results: dict[str, str | None] = {}
    start = time.time()
    for case in load_model_tests(kind="node"):
        random = [why for pattern, why in RANDOM.items() if re.match(pattern, case.name)]
        if random:
            results[case.name] = random[0]
            continue
        try:
            signal.alarm(10)
            rep = backend.prepare(case.model, "CPU")
            for inputs, expected in case.data_sets:
                inputs = [_array(item) for item in inputs]
                expected = [_array(item) for item in expected]
                outputs = rep.run(inputs)
                Runner.assert_similar_outputs(expected, outputs, rtol=case.rtol, atol=case.atol)
            results[case.name] = None
        except (Exception, _Timeout) as e:  # every failure is recorded with its reason
            known = [why for pattern, why in KNOWN.items() if re.match(pattern, case.name)]
            results[case.name] = known[0] if known else reason_of(e)
        finally:
            signal.alarm(0)
    failed = {name: why for name, why in results.items() if why}
    lines = [
        "# onnx node tests that burn.onnx.backend does not pass, one per line with the reason.",
        "# Written by tools/onnx_node_exclusions.py; the suite runs every test not listed here.",
    ]
    lines += [f"{name}  # {why}" for name, why in sorted(failed.items())]
    OUT.write_text("\n".join(lines) + "\n")
    passed = len(results) - len(failed)
    print(f"{passed} / {len(results)} node tests pass ({time.time() - start:.0f} s)")
    kinds = collections.Counter(
        why.split(":")[0] if why.startswith(("unsupported op", "error")) else why
        for why in failed.values()
    )
    for kind, count in kinds.most_common():
        print(f"  {count:5d}  {kind}")
    sys.exit(0)


if __name__ == "__main__":
    main()
