"""Every vec4 matmul configuration of burn-wgpu, timed side by side with cuBLAS fp32.

Where `bench_wgpu.py` times what the backend picks (after autotune), this script times each
tile shape of the vec4 kernel (autotune's candidates, plus any given with `--tile`) at square
sizes, so the candidate list is chosen from measurements. The first rows of every product are
checked against float64 numpy before timing.

    python benches/matmul_variants.py --sizes 1024 4096 8192 --tile 64,64,32,8,4
"""

from __future__ import annotations

import argparse

import numpy as np
from bench_wgpu import seconds_per_call
from burn.tensor import TensorData
from burn.wgpu import Wgpu, autotune
from burn.wgpu import kernels as K

try:
    import torch
except ImportError:
    torch = None


def tile_tflops(rt, lhs, rhs, out, n: int, tile, expected_rows: np.ndarray):
    """(TFLOP/s, relative error of the first rows) of one tile shape on an n x n product."""
    bm, bn, bk, tm, tn = tile
    exact = n % bm == 0 and n % bn == 0 and n % bk == 0
    source = K.matmul_vec4(bm, bn, bk, tm, tn, True, False, exact)
    info = K.MATMUL.pack(
        m=n,
        n=n,
        k=n,
        batches=1,
        batch_shape=(),
        a_offset=0,
        a_strides=(n, 1),
        b_offset=0,
        b_strides=(n, 1),
    )
    handles = (lhs.handle, rhs.handle, out.handle)

    def launch():
        rt.launch(source, ("r", "r", "rw"), handles, info, (-(-n // bn), -(-n // bm), 1))

    launch()
    got = Wgpu.into_data(Wgpu.slice(out, ((0, len(expected_rows), 1), (0, n, 1)))).array
    err = float(np.abs(got - expected_rows).max() / np.abs(expected_rows).max())
    return 2 * n**3 / seconds_per_call(launch, rt.sync, 1) / 1e12, err


def cublas_tflops(a: np.ndarray, b: np.ndarray) -> float | None:
    if torch is None or not torch.cuda.is_available():
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    return 2 * len(a) ** 3 / seconds_per_call(lambda: ta @ tb, torch.cuda.synchronize, 1) / 1e12


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 4096, 8192])
    parser.add_argument(
        "--tile", action="append", default=[], help="extra BM,BN,BK,TM,TN to time (repeatable)"
    )
    args = parser.parse_args()
    tiles = [c for c in autotune.CANDIDATES if c[3] % 4 == 0 and c[4] % 4 == 0]
    tiles += [tuple(int(v) for v in t.split(",")) for t in args.tile]
    rt = Wgpu.runtime()
    print(f"# {rt.describe()}")
    limit = int(rt.limits.get("max-compute-workgroup-storage-size", 16384))
    for n in args.sizes:
        rng = np.random.default_rng(n)
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        lhs = Wgpu.from_data(TensorData(a), Wgpu.device())
        rhs = Wgpu.from_data(TensorData(b), Wgpu.device())
        out = Wgpu._like(lhs, (n, n))
        expected_rows = a[:4].astype(np.float64) @ b.astype(np.float64)
        peer = cublas_tflops(a, b)
        if peer:
            print(f"n={n} cuBLAS fp32 {peer:.1f} TFLOP/s")
        for tile in tiles:
            bm, bn, bk, tm, tn = tile
            if (bm + bn) * bk * 4 > limit or (bm // tm) * (bn // tn) > 1024:
                continue
            tflops, err = tile_tflops(rt, lhs, rhs, out, n, tile, expected_rows)
            versus = f" = {tflops / peer:.2f}x cuBLAS" if peer else ""
            print(f"n={n} tile={tile} {tflops:.1f} TFLOP/s{versus} (rel err {err:.1e})", flush=True)


if __name__ == "__main__":
    main()
