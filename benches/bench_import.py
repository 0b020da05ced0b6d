"""Loading a 100M-parameter checkpoint: burn.pytorch against torch.load, burn.safetensors
against safetensors.numpy.load_file.

Both sides read the same file in the same process and end with every tensor in memory:
`burn.pytorch` reads the pickle through its restricted unpickler, then each tensor's bytes
straight into a new array; `torch.load(weights_only=True)` is PyTorch's own safe loader. The files
are read once before timing, so every run reads from the page cache. A last row loads the
safetensors record into a module of the same parameters on NdArray (`load_record`, which
copies once more into the module's tensors).

    uv run python benches/bench_import.py                 # 100M parameters, writes RESULTS.md
    uv run python benches/bench_import.py --params 10e6 --quick

torch is optional: without it the `.pt` file cannot be written and its row is skipped.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
from burn.backend import NdArray
from burn.module import Module, Param
from burn.pytorch import LoadArgs, PyTorchFileRecorder
from burn.safetensors import SafetensorsFileRecorder
from burn.tensor import Tensor
from common import median_ms, parse_run_args, publish, torch_machine

try:
    import torch
except ImportError:
    torch = None
import safetensors.numpy as safetensors_numpy

SECTION = "## burn-import: loading a 100M-parameter checkpoint"


def make_arrays(params: int) -> dict[str, np.ndarray]:
    """Ten `[1000, cols]` weights and ten biases, about `params` float32 values in all."""
    rng = np.random.default_rng(0)
    cols = max(1, params // 10_000)
    arrays = {}
    for i in range(10):
        arrays[f"layers.{i}.weight"] = rng.standard_normal((1000, cols), dtype=np.float32)
        arrays[f"layers.{i}.bias"] = rng.standard_normal((cols,), dtype=np.float32)
    return arrays


class Stack(Module):
    """A module whose parameters have the arrays' names (no layout adaptation applies)."""

    def __init__(self, arrays: dict[str, np.ndarray]):
        self.layers = [
            _Layer(arrays[f"layers.{i}.weight"].shape, arrays[f"layers.{i}.bias"].shape)
            for i in range(10)
        ]


class _Layer(Module):
    def __init__(self, weight_shape, bias_shape):
        self.weight = Param(Tensor.zeros(list(weight_shape), NdArray.device()))
        self.bias = Param(Tensor.zeros(list(bias_shape), NdArray.device()))


def read_all(record) -> int:
    return sum(tensor.read().nbytes for _, tensor in record.tensors.values())


def check_values(record, arrays: dict[str, np.ndarray]) -> None:
    """The timed loads must produce the real values: compare every tensor once."""
    for key, (_, tensor) in record.tensors.items():
        assert np.array_equal(tensor.read(), arrays[key]), key


def main() -> None:
    def extra(parser):
        parser.add_argument("--params", type=float, default=100e6)

    args, repeats, warmup = parse_run_args(__doc__.splitlines()[0], 5, 1, extra=extra)
    arrays = make_arrays(int(args.params))
    total = sum(a.size for a in arrays.values())
    info = torch_machine(torch)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        st_path = folder / "model.safetensors"
        safetensors_numpy.save_file(arrays, str(st_path))
        if torch is not None:
            pt_path = folder / "model.pt"
            torch.save({k: torch.from_numpy(v) for k, v in arrays.items()}, pt_path)
            ours = median_ms(
                lambda: read_all(PyTorchFileRecorder().load(LoadArgs(pt_path))), repeats, warmup
            )
            theirs = median_ms(lambda: torch.load(pt_path, weights_only=True), repeats, warmup)
            check_values(PyTorchFileRecorder().load(LoadArgs(pt_path)), arrays)
            rows.append(
                [
                    ".pt (zip)",
                    f"{ours:.0f}",
                    "torch.load(weights_only=True)",
                    f"{theirs:.0f}",
                    f"{ours / theirs:.2f}",
                ]
            )
        ours = median_ms(
            lambda: read_all(SafetensorsFileRecorder().load(LoadArgs(st_path))), repeats, warmup
        )
        theirs = median_ms(lambda: safetensors_numpy.load_file(str(st_path)), repeats, warmup)
        check_values(SafetensorsFileRecorder().load(LoadArgs(st_path)), arrays)
        rows.append(
            [
                "safetensors",
                f"{ours:.0f}",
                "safetensors.numpy.load_file",
                f"{theirs:.0f}",
                f"{ours / theirs:.2f}",
            ]
        )
        module = Stack(arrays)
        into_module = median_ms(
            lambda: module.load_record(SafetensorsFileRecorder().load(LoadArgs(st_path))),
            repeats,
            warmup,
        )
        rows.append(
            [
                "safetensors into a module (NdArray)",
                f"{into_module:.0f}",
                "safetensors.numpy.load_file",
                f"{theirs:.0f}",
                f"{into_module / theirs:.2f}",
            ]
        )
    header = ["file", "burn ms", "peer", "peer ms", "burn/peer"]
    how = (
        f"median of {repeats} loads after {warmup} warm-up, {total / 1e6:.0f}M float32 "
        "parameters in 20 tensors, files in the page cache. Ratios above 1 mean burn is slower."
    )
    notes = (
        "The machine is shared: other work ran during the measurement (see the load average), "
        "so read the ratios, not the milliseconds, and treat ratios within about 20% of 1 as "
        "noise. burn reads each tensor with one `readinto` from the file into a new array (the "
        "pickle or the safetensors header only says where); `torch.load` and `load_file` also "
        "end with one array per tensor. Loading into a module adds the module's own copy "
        "(`Tensor.from_data`) and the precision conversion, here f32 to f32.\n\n"
        "Reproduce: `uv run python benches/bench_import.py` (the `.pt` row needs torch)."
    )
    publish(SECTION, "bench_import.py", how, info, header, rows, notes, args.quick)


if __name__ == "__main__":
    main()
