"""Wgpu against PyTorch on the same GPU: matmul, elementwise add, a reduction, a CNN training step.

Everything is measured in one process, side by side:

- f32 matmul at n = 1024, 4096, 8192 in TFLOP/s (2 n^3 per product), against cuBLAS with TF32
  off (the fp32 peer) and, for reference, with TF32 on;
- an elementwise add (12 bytes moved per element: two reads, one write) and a whole-tensor sum
  (4 bytes per element) in GB/s;
- one training step (forward, backward, Adam) of the book's guide CNN at batch 64 on
  `Autodiff(Wgpu)`, written with plain tensor ops (conv, batch norm, adaptive pool, linear),
  against the same model in PyTorch.

Method: results are checked against a float64 reference before timing; each timing queues many
launches (at least 0.2 s of work) and synchronises once before reading the clock (`Wgpu.sync()`,
`torch.cuda.synchronize()`); the first matmul of a shape autotunes and is excluded.

    python benches/bench_wgpu.py --out results.md     # full sizes (a real GPU)
    python benches/bench_wgpu.py --results            # ... and its section of RESULTS.md
    python benches/bench_wgpu.py --quick              # tiny sizes: checks the script anywhere

torch is optional: without it (or without CUDA, where torch runs on the CPU and is labelled
so) the peer columns say what they measured.
"""

from __future__ import annotations

import argparse
import datetime
import math
import platform
import time

import numpy as np
import wgpu
from burn.autodiff import Autodiff
from burn.tensor import Int, Tensor, TensorData, activation, module
from burn.tensor.module import adaptive_avg_pool2d, conv2d
from burn.wgpu import Wgpu
from common import emit

try:
    import torch
    import torch.nn.functional as F  # noqa: N812
except ImportError:  # the peer columns stay empty
    torch = None


SECTION = "## burn-wgpu: Wgpu against PyTorch CUDA on one GPU"

# ---------------------------------------------------------------------- timing helpers


MIN_SECONDS = 0.2  # a timed run lasts at least this long, so one sync costs little


def seconds_per_call(fn, sync, repeats: int) -> float:
    """Seconds per call: `repeats` calls (more, x4 at a time, until `MIN_SECONDS`) queued, one
    sync at the end; the fixed cost of that sync is then small against the work measured."""
    fn()
    sync()
    while True:
        start = time.perf_counter()
        for _ in range(repeats):
            fn()
        sync()
        elapsed = time.perf_counter() - start
        if elapsed >= MIN_SECONDS or repeats >= 4096:
            return elapsed / repeats
        repeats *= 4


def time_wgpu(fn, repeats: int) -> float:
    return seconds_per_call(fn, Wgpu.sync, repeats)


def torch_device() -> str:
    return "cuda" if torch is not None and torch.cuda.is_available() else "cpu"


def torch_sync() -> None:
    if torch is not None and torch.cuda.is_available():
        torch.cuda.synchronize()


def time_torch(fn, repeats: int) -> float:
    return seconds_per_call(fn, torch_sync, repeats)


def fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3g}"


def ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or b is None or b == 0 else f"{a / b:.2f}x"


# ---------------------------------------------------------------------- kernels


def upload(array: np.ndarray):
    return Wgpu.from_data(TensorData(np.ascontiguousarray(array, dtype=np.float32)), Wgpu.device())


def bench_matmul(n: int, repeats: int) -> list[str]:
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    pa, pb = upload(a), upload(b)
    out = Wgpu.matmul(pa, pb)  # first call of the shape class: autotunes
    rows = min(n, 16)
    got = Wgpu.into_data(Wgpu.slice(out, ((0, rows, 1), (0, n, 1)))).array
    want = a[:rows].astype(np.float64) @ b.astype(np.float64)
    err = float(np.abs(got - want).max() / np.abs(want).max())
    assert err < 1e-4, f"matmul n={n}: relative error {err}"
    flops = 2.0 * n**3
    ours = flops / time_wgpu(lambda: Wgpu.matmul(pa, pb), repeats) / 1e12
    fp32 = tf32 = None
    if torch is not None:
        dev = torch_device()
        ta, tb = torch.from_numpy(a).to(dev), torch.from_numpy(b).to(dev)
        torch.backends.cuda.matmul.allow_tf32 = False
        fp32 = flops / time_torch(lambda: ta @ tb, repeats) / 1e12
        if dev == "cuda":
            torch.backends.cuda.matmul.allow_tf32 = True
            tf32 = flops / time_torch(lambda: ta @ tb, repeats) / 1e12
            torch.backends.cuda.matmul.allow_tf32 = False
    return [f"matmul f32 n={n}", "TFLOP/s", fmt(ours), fmt(fp32), ratio(ours, fp32), fmt(tf32)]


def bench_add(n: int, repeats: int) -> list[str]:
    rng = np.random.default_rng(1)
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    pa, pb = upload(a), upload(b)
    got = Wgpu.into_data(Wgpu.binary("add", pa, pb)).array
    np.testing.assert_allclose(got, a + b, rtol=1e-6)
    nbytes = 12.0 * n
    ours = nbytes / time_wgpu(lambda: Wgpu.binary("add", pa, pb), repeats) / 1e9
    peer = None
    if torch is not None:
        dev = torch_device()
        ta, tb = torch.from_numpy(a).to(dev), torch.from_numpy(b).to(dev)
        peer = nbytes / time_torch(lambda: ta + tb, repeats) / 1e9
    return [
        f"add f32 n=2^{int(math.log2(n))}",
        "GB/s",
        fmt(ours),
        fmt(peer),
        ratio(ours, peer),
        "-",
    ]


def bench_sum(n: int, repeats: int) -> list[str]:
    rng = np.random.default_rng(2)
    a = rng.standard_normal(n, dtype=np.float32)
    pa = upload(a)
    got = float(Wgpu.into_data(Wgpu.reduce("sum", pa, 0)).array[0])
    want = float(a.astype(np.float64).sum())
    assert abs(got - want) <= 1e-3 * math.sqrt(n) + 1e-5 * abs(want), (got, want)
    nbytes = 4.0 * n
    ours = nbytes / time_wgpu(lambda: Wgpu.reduce("sum", pa, 0), repeats) / 1e9
    peer = None
    if torch is not None:
        ta = torch.from_numpy(a).to(torch_device())
        peer = nbytes / time_torch(lambda: ta.sum(), repeats) / 1e9
    return [
        f"sum f32 n=2^{int(math.log2(n))}",
        "GB/s",
        fmt(ours),
        fmt(peer),
        ratio(ours, peer),
        "-",
    ]


# ---------------------------------------------------------------------- the guide CNN

B = Autodiff(Wgpu)


def init_cnn(rng: np.random.Generator, size: int) -> dict[str, np.ndarray]:
    """The guide's model: conv 1->8, BN, relu, conv 8->16, BN, relu, pool 8x8, 1024->512->10."""

    def uniform(shape, fan_in):
        bound = 1.0 / math.sqrt(fan_in)
        return rng.uniform(-bound, bound, shape).astype(np.float32)

    return {
        "c1": uniform((8, 1, 3, 3), 9),
        "cb1": uniform((8,), 9),
        "g1": np.ones((8,), np.float32),
        "be1": np.zeros((8,), np.float32),
        "c2": uniform((16, 8, 3, 3), 72),
        "cb2": uniform((16,), 72),
        "g2": np.ones((16,), np.float32),
        "be2": np.zeros((16,), np.float32),
        "w1": uniform((1024, 512), 1024),
        "b1": uniform((1, 512), 1024),
        "w2": uniform((512, 10), 512),
        "b2": uniform((1, 10), 512),
    }


def batch_norm(x: Tensor, gamma: Tensor, beta: Tensor) -> Tensor:
    """Training-mode batch norm over N, H, W (biased variance, eps 1e-5): burn's op, as the
    PyTorch side calls `F.batch_norm`."""
    return module.batch_norm(x, gamma, beta, 1e-5)[0]


def burn_cnn(p: dict[str, Tensor], x: Tensor, targets: Tensor) -> Tensor:
    h = activation.relu(batch_norm(conv2d(x, p["c1"], p["cb1"]), p["g1"], p["be1"]))
    h = activation.relu(batch_norm(conv2d(h, p["c2"], p["cb2"]), p["g2"], p["be2"]))
    h = adaptive_avg_pool2d(h, (8, 8)).flatten(1, 3)
    h = activation.relu(h.matmul(p["w1"]) + p["b1"])
    logits = h.matmul(p["w2"]) + p["b2"]
    return activation.log_softmax(logits, 1).gather(1, targets).mean().neg()


def torch_cnn(p, x, targets):
    h = F.conv2d(x, p["c1"], p["cb1"])
    h = F.relu(F.batch_norm(h, None, None, p["g1"], p["be1"], training=True))
    h = F.conv2d(h, p["c2"], p["cb2"])
    h = F.relu(F.batch_norm(h, None, None, p["g2"], p["be2"], training=True))
    h = F.adaptive_avg_pool2d(h, (8, 8)).flatten(1)
    h = F.relu(h @ p["w1"] + p["b1"])
    return F.cross_entropy(h @ p["w2"] + p["b2"], targets)


class BurnAdamStep:
    """Forward, backward and an Adam update written with tensor ops, on Autodiff(Wgpu)."""

    def __init__(self, params, x, targets, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        device = B.device()
        self.params = {
            k: Tensor[B, v.ndim].from_data(v, device).require_grad() for k, v in params.items()
        }
        self.m = {
            k: Tensor[Wgpu, v.ndim].zeros(list(v.shape), Wgpu.device()) for k, v in params.items()
        }
        self.v = {
            k: Tensor[Wgpu, v.ndim].zeros(list(v.shape), Wgpu.device()) for k, v in params.items()
        }
        self.x = Tensor[B, 4].from_data(x, device)
        self.targets = Tensor[B, 2, Int].from_data(targets.reshape(-1, 1).astype(np.int32), device)
        self.lr, self.betas, self.eps, self.t = lr, betas, eps, 0

    def step(self) -> Tensor:
        loss = burn_cnn(self.params, self.x, self.targets)
        grads = loss.backward()
        self.t += 1
        b1, b2 = self.betas
        c1, c2 = 1 - b1**self.t, 1 - b2**self.t
        for k, p in self.params.items():
            g = p.grad_remove(grads)
            self.m[k] = self.m[k] * b1 + g * (1 - b1)
            self.v[k] = self.v[k] * b2 + g * g * (1 - b2)
            update = (self.m[k] / c1) / ((self.v[k] / c2).sqrt() + self.eps)
            self.params[k] = (
                Tensor[B, p.rank()].from_inner(p.inner() - update * self.lr).require_grad()
            )
        return loss


def bench_cnn(batch: int, repeats: int) -> list[str]:
    rng = np.random.default_rng(3)
    params = init_cnn(rng, 28)
    x = rng.standard_normal((batch, 1, 28, 28), dtype=np.float32)
    targets = rng.integers(0, 10, size=batch)
    ours = BurnAdamStep(params, x, targets)
    first = float(ours.step().into_scalar())
    seconds = time_wgpu(ours.step, repeats)
    peer = None
    if torch is not None:
        dev = torch_device()
        tp = {k: torch.tensor(v, device=dev, requires_grad=True) for k, v in params.items()}
        tx = torch.from_numpy(x).to(dev)
        tt = torch.from_numpy(targets).long().to(dev)
        want = torch_cnn(tp, tx, tt).item()
        assert abs(first - want) < 1e-3 * max(1.0, abs(want)), (first, want)
        opt = torch.optim.Adam(tp.values(), lr=1e-3)

        def torch_step():
            opt.zero_grad(set_to_none=True)
            loss = torch_cnn(tp, tx, tt)
            loss.backward()
            opt.step()

        peer = time_torch(torch_step, repeats)
    ms = seconds * 1e3
    peer_ms = None if peer is None else peer * 1e3
    host, launches = host_seconds(ours.step, repeats)
    return [
        [
            f"guide CNN step, batch {batch}, Adam",
            "ms",
            fmt(ms),
            fmt(peer_ms),
            ratio(peer_ms, ms),
            "-",
        ],
        [f"... its host side alone ({launches} launches)", "ms", fmt(host * 1e3), "-", "-", "-"],
    ]


def host_seconds(fn, repeats: int) -> tuple[float, int]:
    """(seconds, kernel launches) per call of `fn` with the GPU submissions skipped: what
    Python, the tensor layers and command recording cost. When it is close to the full time,
    the step is host-bound. The skipped work computes nothing; nothing reads it afterwards."""
    rt = Wgpu.runtime()
    Wgpu.sync()
    submit = rt.queue.submit
    rt.queue.submit = lambda *args, **kwargs: None
    launches = rt.launches
    try:
        start = time.perf_counter()
        for _ in range(repeats):
            fn()
        seconds = (time.perf_counter() - start) / repeats
    finally:
        rt.queue.submit = submit
    Wgpu.sync()
    return seconds, round((rt.launches - launches) / repeats)


# ---------------------------------------------------------------------- report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, few repeats")
    parser.add_argument("--out", help="write the markdown table to this file")
    parser.add_argument(
        "--results", action="store_true", help=f"write the table as the section {SECTION!r}"
    )
    args = parser.parse_args()

    if args.quick:
        sizes, elems, batch, repeats, cnn_repeats = (64, 128), 1 << 16, 8, 3, 2
    else:
        sizes, elems, batch, repeats, cnn_repeats = (1024, 4096, 8192), 1 << 26, 64, 20, 20

    rt = Wgpu.runtime()
    peer = "none (torch not installed)"
    if torch is not None:
        dev = torch_device()
        name = torch.cuda.get_device_name() if dev == "cuda" else platform.processor() or "CPU"
        peer = f"torch {torch.__version__} on {dev} ({name})"
    rows = [bench_matmul(n, repeats if n < 8192 else max(3, repeats // 4)) for n in sizes]
    rows.append(bench_add(elems, repeats))
    rows.append(bench_sum(elems, repeats))
    rows += bench_cnn(batch, cnn_repeats)

    header = ["benchmark", "unit", "Wgpu", "torch (fp32)", "Wgpu / torch", "torch TF32"]
    driver = rt.info.get("description") or "?"
    lines = [
        f"Wgpu on {rt.describe()}, driver {driver}, wgpu-py {wgpu.__version__}; peer: {peer}; "
        f"{datetime.date.today().isoformat()}",
        f"{'quick' if args.quick else 'full'} sizes; the CNN row's ratio is torch time / Wgpu time",
    ]
    emit(lines, header, rows, args.out, SECTION if args.results else None)


if __name__ == "__main__":
    main()
