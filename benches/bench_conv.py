"""NdArray's convolution ops against PyTorch CPU, forward and both backward ops, in one run.

The shapes are the guide's two convolutions (batch 64), two of ResNet-18's 3x3 layers (batch
1, padding 1, one of them with stride 2) and two depthwise 3x3 layers of MobileNet's kind (one
filter per channel: batch 8 at 112x112, batch 1 at 7x7), then two layers on large images
(64 channels at 256x256, and a 7x7 stem over a 3x512x512 image), where one image's im2col
matrix or Winograd tiles are far larger than the caches. Every op is the backend's own entry
point on numpy arrays, so the Tensor layer's overhead is not part of the figure; its first
call, where the backend's autotune picks the algorithm for the shape, comes before the timing.
PyTorch
runs `conv2d` and `torch.ops.aten.convolution_backward` with the same thread count as the
BLAS.

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

# (label, x shape, weight shape, stride, padding, groups)
SHAPES = [
    ("guide conv1", (64, 1, 28, 28), (8, 1, 3, 3), 1, 0, 1),
    ("guide conv2", (64, 8, 26, 26), (16, 8, 3, 3), 1, 0, 1),
    ("resnet 3x3", (1, 64, 56, 56), (64, 64, 3, 3), 1, 1, 1),
    ("resnet 3x3 /2", (1, 128, 56, 56), (256, 128, 3, 3), 2, 1, 1),
    ("depthwise 3x3", (8, 32, 112, 112), (32, 1, 3, 3), 1, 1, 32),
    ("depthwise 3x3 7x7", (1, 960, 7, 7), (960, 1, 3, 3), 1, 1, 960),
    ("large 3x3", (1, 64, 256, 256), (64, 64, 3, 3), 1, 1, 1),
    ("large 7x7", (1, 3, 512, 512), (32, 3, 7, 7), 1, 3, 1),
]


def cases(rng: np.random.Generator):
    """(label, op, burn fn, torch fn or None, burn result fn, torch result fn) per op."""
    backend = NdArrayBackend()
    for label, xs, ws, stride, pad, groups in SHAPES:
        x = rng.standard_normal(xs, dtype=np.float32)
        w = rng.standard_normal(ws, dtype=np.float32)
        opts = ConvOptions((stride, stride), (pad, pad), (1, 1), groups)
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

            def backward(mask, px=px, pw=pw, pg=pg, s=stride, p=pad, gr=groups):
                return torch.ops.aten.convolution_backward(
                    pg, px, pw, None, [s, s], [p, p], [1, 1], False, [0, 0], gr, mask
                )

            peers = {
                "forward": lambda px=px, pw=pw, s=stride, p=pad, gr=groups: (
                    torch.nn.functional.conv2d(px, pw, None, s, p, 1, gr)
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
            want = peer().numpy()
            # Float32 sums over a large image's 65k positions differ by more than 1e-3 in
            # their small entries, in either library: the tolerance follows the largest.
            scale = max(1.0, float(np.abs(want).max()))
            np.testing.assert_allclose(fn(), want, rtol=1e-3, atol=1e-5 * scale)
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
How to read it: ratios above 1 mean NdArray is slower. Read the ratios, not the milliseconds:
both columns of a row were measured seconds apart in one process, and on this shared machine
single runs move by 10-20%. The table is single-threaded: with 2 BLAS and torch threads on a
busy 2-core machine, single timings swung by 10-100x (threads spinning while a neighbour held
the other core).

NdArray times every algorithm that can compute a layer on the layer's first call and keeps the
fastest (`burn.ndarray.autotune`); each row is the winner here. The candidates: im2col (and
col2im) with batched matmuls; at stride 1, the flat padded grid (`burn.ndarray.conv`), the
columns of one kernel row for 2-d layers (`burn.ndarray.conv_rows`), Winograd F(2x2, 3x3) and
F(4x4, 3x3) from 16 channels (`burn.ndarray.winograd`), and the depthwise taps. What is left
on the guide's second layer's forward pass is BLAS throughput: its kernel-row products alone
(three `[16, 24] @ [24, 576]` per sample) take about 0.62 ms at OpenBLAS's rate, about
PyTorch's time for the whole convolution.
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
