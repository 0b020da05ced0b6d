"""NdArray against plain numpy and, when importable, PyTorch on the CPU, in one run.

The question is what the backend layer costs on top of the library it runs on, so every op is
timed for the three side by side in the same process and reported as ratios (NdArray/numpy,
NdArray/torch), never as absolute targets. Each timing is the median of several repeats after
warm-up runs.

    uv run python benches/bench_ndarray.py            # prints the table, writes RESULTS.md
    uv run python benches/bench_ndarray.py --quick    # fewer repeats, nothing written

PyTorch is not a project dependency; to include it, run this file with an interpreter that has
torch installed and the burn-tensor and burn-ndarray sources importable.
"""

from __future__ import annotations

import numpy as np
from burn.ndarray import NdArray
from burn.tensor import Tensor, TensorData
from burn.tensor.module import ConvOptions, conv2d

try:
    import torch
except ImportError:
    torch = None

from common import (
    median_ms,
    parse_run_args,
    print_start,
    publish,
    ratio,
    torch_machine,
)

SECTION = "## burn-ndarray: NdArray against numpy and PyTorch CPU"


def burn_tensor(array: np.ndarray) -> Tensor:
    return Tensor.from_data(TensorData(array), NdArray.device())


def im2col_conv2d(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The numpy reference: stride 1, no padding, patches by a strided view, one matmul.

    Columns are batch-and-position and rows channel-and-tap, so the copy into the im2col
    matrix reads the input in contiguous runs along its last dim.
    """
    o, c, kh, kw = w.shape
    patches = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))
    n, _, oh, ow = patches.shape[:4]
    cols = patches.transpose(1, 4, 5, 0, 2, 3).reshape(c * kh * kw, n * oh * ow)
    out = w.reshape(o, -1) @ cols + b[:, None]
    return out.reshape(o, n, oh, ow).transpose(1, 0, 2, 3)


def cases(rng: np.random.Generator, sizes: list[int]):
    """(name, shape text, burn fn, numpy fn, torch fn or None) for every benchmark."""
    for n in sizes:
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        ta, tb = burn_tensor(a), burn_tensor(b)
        pa, pb = (torch.from_numpy(a), torch.from_numpy(b)) if torch else (None, None)
        yield (
            "matmul",
            f"{n}x{n} @ {n}x{n}",
            lambda ta=ta, tb=tb: ta.matmul(tb),
            lambda a=a, b=b: a @ b,
            (lambda pa=pa, pb=pb: pa @ pb) if torch else None,
        )
    # The guide's MNIST model: two 3x3 convolutions on a batch of 64.
    for x_shape, w_shape in (((64, 1, 28, 28), (8, 1, 3, 3)), ((64, 8, 26, 26), (16, 8, 3, 3))):
        x = rng.standard_normal(x_shape, dtype=np.float32)
        w = rng.standard_normal(w_shape, dtype=np.float32)
        bias = rng.standard_normal(w_shape[0], dtype=np.float32)
        tx, tw, tbias = burn_tensor(x), burn_tensor(w), burn_tensor(bias)
        options = ConvOptions(stride=1, padding=0, dilation=1, groups=1)
        if torch:
            px, pw, pbias = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(bias)
        yield (
            "conv2d",
            f"{list(x_shape)} * {list(w_shape)}",
            lambda tx=tx, tw=tw, tb=tbias, o=options: conv2d(tx, tw, tb, o),
            lambda x=x, w=w, b=bias: im2col_conv2d(x, w, b),
            (lambda px=px, pw=pw, pb=pbias: torch.nn.functional.conv2d(px, pw, pb))
            if torch
            else None,
        )
    big = rng.standard_normal((4096, 4096), dtype=np.float32)
    tbig = burn_tensor(big)
    pbig = torch.from_numpy(big) if torch else None
    yield (
        "sum_dim(1)",
        "[4096, 4096]",
        lambda: tbig.sum_dim(1),
        lambda: big.sum(axis=1, keepdims=True),
        (lambda: pbig.sum(dim=1, keepdim=True)) if torch else None,
    )


def check_agreement(rng: np.random.Generator) -> None:
    """The timed ops must compute the same thing, or the ratios mean nothing."""
    x = rng.standard_normal((2, 3, 8, 8), dtype=np.float32)
    w = rng.standard_normal((4, 3, 3, 3), dtype=np.float32)
    b = rng.standard_normal(4, dtype=np.float32)
    got = conv2d(burn_tensor(x), burn_tensor(w), burn_tensor(b), ConvOptions(1, 0, 1, 1))
    np.testing.assert_allclose(got.numpy(), im2col_conv2d(x, w, b), rtol=1e-4, atol=1e-4)


def run(repeats: int, warmup: int, sizes: list[int]) -> list[list[str]]:
    rng = np.random.default_rng(0)
    check_agreement(rng)
    rows = []
    for name, shape, burn_fn, numpy_fn, torch_fn in cases(rng, sizes):
        t_burn, t_numpy, t_torch = (
            median_ms(fn, repeats, warmup, min_seconds=0.2) for fn in (burn_fn, numpy_fn, torch_fn)
        )
        row = [
            name,
            shape,
            f"{t_burn:.2f}",
            f"{t_numpy:.2f}",
            "-" if t_torch is None else f"{t_torch:.2f}",
            ratio(t_burn, t_numpy),
            ratio(t_burn, t_torch),
        ]
        rows.append(row)
        print(" | ".join(row), flush=True)
    return rows


NOTES = """\
How to read it:

- NdArray's matmul and sum_dim are one numpy call each, so their ratio to numpy measures the
  Tensor layer's overhead (checks, wrapping): visible only on the smallest inputs.
- NdArray's conv2d is itself an im2col in numpy (a strided window view, one copy, one BLAS
  matmul), so it should track the numpy reference; PyTorch's dedicated CPU kernels are what an
  im2col cannot match on these small-channel shapes.
- On a shared machine with few cores, multi-threaded BLAS timings swing with the neighbours'
  load; single-threaded runs (`OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1`) compare the libraries
  more steadily. Ratios within about 20% of 1 are noise.

Reproduce: `uv run python benches/bench_ndarray.py` (no torch column), or with an interpreter
that has torch installed and both packages' `src` folders on `PYTHONPATH`.
"""

HEADER = ["op", "shape", "NdArray ms", "numpy ms", "torch ms", "NdArray/numpy", "NdArray/torch"]


def main() -> None:
    args, repeats, warmup = parse_run_args(__doc__.splitlines()[0], 7, 2, quick=(3, 1))

    info = torch_machine(torch)
    print_start(info, HEADER)
    publish(
        SECTION,
        "bench_ndarray.py",
        f"median of at least {repeats} repeats (fast ops: as many as fit in 0.2 s) after "
        f"{warmup} warm-up runs, times in milliseconds, float32. Ratios above 1 mean NdArray "
        "is slower.",
        info,
        HEADER,
        run(repeats, warmup, [256, 512, 1024, 2048]),
        NOTES,
        args.quick,
    )


if __name__ == "__main__":
    main()
