"""NdArray's convolution ops against PyTorch CPU, forward and both backward ops, in one run.

The shapes are the guide's two convolutions (batch 64) and two of ResNet-18's 3x3 layers
(batch 1, padding 1, one of them with stride 2). Every op is the backend's own entry point on
numpy arrays, so the Tensor layer's overhead is not part of the figure; PyTorch runs
`conv2d` and `torch.ops.aten.convolution_backward` with the same thread count as the BLAS.

    OPENBLAS_NUM_THREADS=1 uv run python benches/bench_conv.py          # writes RESULTS.md
    OPENBLAS_NUM_THREADS=1 uv run python benches/bench_conv.py --quick  # nothing written
"""

from __future__ import annotations

import os

import numpy as np
from burn.backend.ops.module_options import ConvOptions
from burn.ndarray.backend import NdArrayBackend

try:
    import torch
except ImportError:
    torch = None

from common import median_ms, parse_run_args, print_start, publish, ratio, torch_machine

SECTION = "## burn-ndarray: convolutions against PyTorch CPU"

# (label, x shape, weight shape, stride, padding)
SHAPES = [
    ("guide conv1", (64, 1, 28, 28), (8, 1, 3, 3), 1, 0),
    ("guide conv2", (64, 8, 26, 26), (16, 8, 3, 3), 1, 0),
    ("resnet 3x3", (1, 64, 56, 56), (64, 64, 3, 3), 1, 1),
    ("resnet 3x3 /2", (1, 128, 56, 56), (256, 128, 3, 3), 2, 1),
]


def cases(rng: np.random.Generator):
    """(label, op, burn fn, torch fn or None, burn result fn, torch result fn) per op."""
    backend = NdArrayBackend()
    for label, xs, ws, stride, pad in SHAPES:
        x = rng.standard_normal(xs, dtype=np.float32)
        w = rng.standard_normal(ws, dtype=np.float32)
        opts = ConvOptions((stride, stride), (pad, pad), (1, 1), 1)
        y = backend.conv2d(x, w, None, opts)
        g = rng.standard_normal(y.shape, dtype=np.float32)
        ops = {
            "forward": lambda x=x, w=w, o=opts: backend.conv2d(x, w, None, o),
            "x backward": lambda x=x, w=w, g=g, o=opts: backend.conv2d_x_backward(x, w, g, o),
            "weight backward": lambda x=x, w=w, g=g, o=opts: backend.conv2d_weight_backward(
                x, w, g, o
            ),
        }
        peers = {name: None for name in ops}
        if torch is not None:
            px, pw, pg = (torch.from_numpy(a) for a in (x, w, g))

            def backward(mask, px=px, pw=pw, pg=pg, s=stride, p=pad):
                return torch.ops.aten.convolution_backward(
                    pg, px, pw, None, [s, s], [p, p], [1, 1], False, [0, 0], 1, mask
                )

            peers = {
                "forward": lambda px=px, pw=pw, s=stride, p=pad: torch.nn.functional.conv2d(
                    px, pw, None, s, p
                ),
                "x backward": lambda b=backward: b([True, False, False])[0],
                "weight backward": lambda b=backward: b([False, True, False])[1],
            }
        for name, fn in ops.items():
            yield label, xs, ws, name, fn, peers[name]


def run(repeats: int, warmup: int) -> list[list[str]]:
    rows = []
    for label, xs, ws, name, fn, peer in cases(np.random.default_rng(0)):
        if peer is not None:  # the two must agree, or the ratio means nothing
            np.testing.assert_allclose(fn(), peer().numpy(), rtol=1e-3, atol=1e-3)
        t_burn, t_torch = (median_ms(f, repeats, warmup, min_seconds=0.2) for f in (fn, peer))
        row = [
            label,
            f"{list(xs)} * {list(ws)}",
            name,
            f"{t_burn:.2f}",
            "-" if t_torch is None else f"{t_torch:.2f}",
            ratio(t_burn, t_torch),
        ]
        rows.append(row)
        print(" | ".join(row), flush=True)
    return rows


NOTES = """\
How to read it: ratios above 1 mean NdArray is slower. The machine is shared and was busy
during the run (see the load average), so read the ratios, not the milliseconds, and treat
ratios within about 20% of 1 as noise. With 2 BLAS and torch threads on this 2-core machine
under that load, single timings swung by 10-100x (threads spinning while a neighbour held the
other core), so the table is single-threaded.

- The input gradient at stride 1 (and the transposed convolution) is where NdArray changed:
  a matmul plus one contiguous shifted add per kernel tap, chosen per shape by timing it
  against the im2col matmul plus col2im on the first call. In interleaved runs of the previous
  code and this one (medians of 3 runs each, 1 thread, load average 1.9 to 4.0), the guide's
  second convolution's input gradient went from 2.4-2.9 ms to 1.6-2.3 ms (1.3-1.5x faster)
  and the first's from 0.30 to 0.24 ms; the other rows run unchanged code.
- The forward pass and the weight gradient stay the im2col and one BLAS matmul: a shifted-view
  version of both (long contiguous copies instead of short-row gathers) was measured and came
  out even with im2col, its few wrap-around columns costing what the copies saved, so a timed
  choice between them was a coin toss on a busy machine and was dropped.
- What is left is BLAS throughput. This machine's environment sets `OPENBLAS_CORETYPE=Haswell`
  (see the machine lines), which makes OpenBLAS use AVX2 kernels on a CPU with AVX-512; the
  PyTorch build uses AVX-512. With the variable unset (OpenBLAS picks its own SkylakeX
  kernels), a quick 2-thread run of this table gave NdArray/torch 1.44, 1.52 and 1.89 for the
  ResNet 3x3 layer's forward, input and weight gradient (2.2-2.3 under the Haswell kernels)
  and 1.20-1.29 for the strided one; the guide's small-channel shapes barely moved.
"""

HEADER = ["layer", "x * weight", "op", "NdArray ms", "torch ms", "NdArray/torch"]


def main() -> None:
    args, repeats, warmup = parse_run_args(__doc__.splitlines()[0], 15, 2, quick=(5, 1))
    if torch is not None:
        torch.set_num_threads(int(os.environ.get("OPENBLAS_NUM_THREADS", "1")))
    info = torch_machine(torch)
    info["load average"] = " ".join(f"{v:.2f}" for v in os.getloadavg())
    print_start(info, HEADER)
    publish(
        SECTION,
        "bench_conv.py",
        f"median of at least {repeats} repeats (fast ops: as many as fit in 0.2 s) after "
        f"{warmup} warm-up runs, times in milliseconds, float32.",
        info,
        HEADER,
        run(repeats, warmup),
        NOTES,
        args.quick,
    )


if __name__ == "__main__":
    main()
