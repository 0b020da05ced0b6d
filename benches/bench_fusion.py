"""Fusion(Wgpu) against Wgpu and PyTorch on one GPU: the guide CNN training step and a long
elementwise chain.

Measured in one process, side by side:

- one training step (forward, backward, Adam) of the guide CNN at batch 64, without and with
  dropout, on `Autodiff(Fusion(Wgpu))` (traced every step, and replayed by whole-step capture,
  `burn.wgpu.fusion.capture`) and `Autodiff(Wgpu)`, against PyTorch eager and a
  PyTorch CUDA graph replaying the whole step (CUDA only): ms per step, steps/s, kernel
  launches per step and the host ms per step (the step with GPU submissions skipped). The
  traced steps update the weights with Adam written in tensor ops (as the captured step must,
  its bias corrections computed on the device) and, in the rows marked "burn's Adam", with
  the framework's own update (`burn.tensor.optim.adam_step_many`, what `burn.optim.Adam` runs), as
  PyTorch's rows use `torch.optim.Adam`;
- a chain of 8 elementwise ops on 2^26 f32 elements, fused (one kernel) and unfused (eight),
  in effective TB/s counting only the chain's two inputs and its output.

The model, the timing helpers and the host-time probe are `bench_wgpu.py`'s. Results are checked
against the unfused backend (and PyTorch's first loss) before timing.

    python benches/bench_fusion.py                 # full sizes (a real GPU)
    python benches/bench_fusion.py --results       # ... and its section of RESULTS.md
    python benches/bench_fusion.py --quick         # small sizes: checks the script anywhere
"""

from __future__ import annotations

import argparse
import datetime
import math
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import wgpu  # noqa: E402
from bench_wgpu import (  # noqa: E402
    batch_norm,
    fmt,
    host_seconds,
    init_cnn,
    ratio,
    seconds_per_call,
    time_torch,
    torch,
    torch_cnn,
    torch_device,
    torch_sync,
)
from burn.autodiff import Autodiff  # noqa: E402
from burn.backend import registry  # noqa: E402
from burn.tensor import Int, Tensor, TensorData, activation  # noqa: E402
from burn.tensor.module import (  # noqa: E402
    adaptive_avg_pool2d,
    conv2d,
    cross_entropy,
    dropout,
)
from burn.tensor.optim import adam_step_many  # noqa: E402
from burn.wgpu import Wgpu  # noqa: E402
from common import emit  # noqa: E402

if torch is not None:
    import torch.nn.functional as F  # noqa: N812

Fusion = registry.get("Fusion")
SECTION = "## burn-fusion: Fusion(Wgpu) against Wgpu and PyTorch on one GPU"
DROPOUT = 0.5


# ---------------------------------------------------------------------- the training step


def cnn(p, x, targets, backend, drop: bool) -> Tensor:
    h = activation.relu(batch_norm(conv2d(x, p["c1"], p["cb1"]), p["g1"], p["be1"]))
    h = activation.relu(batch_norm(conv2d(h, p["c2"], p["cb2"]), p["g2"], p["be2"]))
    h = adaptive_avg_pool2d(h, (8, 8)).flatten(1, 3)
    h = activation.relu(h.matmul(p["w1"]) + p["b1"])
    if drop:
        h = dropout(h, DROPOUT)  # what `burn.nn.Dropout` runs while training
    logits = h.matmul(p["w2"]) + p["b2"]
    return cross_entropy(logits, targets)  # what `burn.nn.CrossEntropyLoss` runs


class AdamStep:
    """Forward, backward and an Adam update on `Autodiff(inner)`: the update written with
    tensor ops, or with `burn_adam` the framework's own (`burn.tensor.optim.adam_step_many`,
    what `burn.optim.Adam` runs for a step's parameters: one backend op, one kernel for a group
    of parameters on Wgpu)."""

    def __init__(
        self, inner, params, x, targets, drop: bool, lr=1e-3, betas=(0.9, 0.999), burn_adam=False
    ):
        self.inner, self.backend, self.drop = inner, Autodiff(inner), drop
        self.burn_adam = burn_adam
        device = self.backend.device()
        self.params = {
            k: Tensor[self.backend, v.ndim].from_data(v, device).require_grad()
            for k, v in params.items()
        }
        zeros = {
            k: Tensor[inner, v.ndim].zeros(list(v.shape), inner.device()) for k, v in params.items()
        }
        self.m, self.v = dict(zeros), dict(zeros)
        self.x = Tensor[self.backend, 4].from_data(x, device)
        self.targets = Tensor[self.backend, 1, Int].from_data(targets.astype(np.int32), device)
        self.lr, self.betas, self.eps, self.t = lr, betas, 1e-8, 0

    def step(self) -> Tensor:
        loss = cnn(self.params, self.x, self.targets, self.backend, self.drop)
        grads = loss.backward()
        self.t += 1
        b1, b2 = self.betas
        c1, c2 = 1 - b1**self.t, 1 - b2**self.t
        if self.burn_adam:
            self._burn_adam(grads)
            return loss
        for k, p in self.params.items():
            g = p.grad_remove(grads)
            self.m[k] = self.m[k] * b1 + g * (1 - b1)
            self.v[k] = self.v[k] * b2 + g * g * (1 - b2)
            update = (self.m[k] / c1) / ((self.v[k] / c2).sqrt() + self.eps)
            self.params[k] = (
                Tensor[self.backend, p.rank()]
                .from_inner(p.inner() - update * self.lr)
                .require_grad()
            )
        return loss

    def _burn_adam(self, grads) -> None:
        """Every parameter's update in one `adam_step_many`, as `burn.optim.Adam` does."""
        keys = list(self.params)
        first = self.t == 1
        b1, b2 = self.betas
        updated, m, v = adam_step_many(
            [self.params[k].inner() for k in keys],
            [self.params[k].grad_remove(grads) for k in keys],
            None if first else [self.m[k] for k in keys],
            None if first else [self.v[k] for k in keys],
            self.t,
            self.lr,
            b1,
            b2,
            self.eps,
        )
        for k, inner, m_k, v_k in zip(keys, updated, m, v, strict=True):
            rank = self.params[k].rank()
            self.params[k] = Tensor[self.backend, rank].from_inner(inner).require_grad()
            self.m[k], self.v[k] = m_k, v_k

    def complete_step(self) -> Tensor:
        """A step whose recorded work is all computed (what a timed step must include)."""
        loss = self.step()
        if hasattr(self.inner, "flush"):
            self.inner.flush()
        return loss


class CapturedAdamStep:
    """The same step as a pure function of tensors, replayed by `capture` after two recordings.

    Everything that changes between steps is an argument: the parameters, Adam's moments and
    the step count (tensors of `Fusion(Wgpu)`); the bias corrections are computed from the
    count on the device, so no host value changes from step to step."""

    def __init__(self, params, x, targets, drop: bool, lr=1e-3, betas=(0.9, 0.999)):
        from burn.wgpu.fusion import capture

        fb = Fusion(Wgpu)
        self.fused, self.backend, self.drop = fb, Autodiff(fb), drop
        self.keys = list(params)
        self.params = [Tensor[fb, v.ndim].from_data(v, fb.device()) for v in params.values()]
        self.m = [Tensor[fb, v.ndim].zeros(list(v.shape), fb.device()) for v in params.values()]
        self.v = [Tensor[fb, v.ndim].zeros(list(v.shape), fb.device()) for v in params.values()]
        self.x = Tensor[fb, 4].from_data(x, fb.device())
        self.targets = Tensor[fb, 1, Int].from_data(targets.astype(np.int32), fb.device())
        self.count = Tensor[fb, 1].zeros([1], fb.device())
        self.lr, self.betas, self.eps = lr, betas, 1e-8
        self.captured = capture(self._pure_step)

    def _pure_step(self, params, m, v, x, targets, count):
        ad = self.backend
        b1, b2 = self.betas
        count = count + 1.0
        # 1 / (1 - beta^t), as tensors: beta^t = exp(t ln beta).
        corrections = (
            (count * math.log(b1)).exp().neg().add_scalar(1.0).recip(),
            (count * math.log(b2)).exp().neg().add_scalar(1.0).recip(),
        )
        tracked = [Tensor[ad, p.rank()].from_inner(p).require_grad() for p in params]
        xs = Tensor[ad, 4].from_inner(x)
        ts = Tensor[ad, 1, Int].from_inner(targets)
        loss = cnn(dict(zip(self.keys, tracked, strict=True)), xs, ts, ad, self.drop)
        grads = loss.backward()
        new_p, new_m, new_v = [], [], []
        for p, t, mk, vk in zip(params, tracked, m, v, strict=True):
            g = t.grad_remove(grads)
            rank = p.rank()
            c1 = corrections[0].reshape([1] * rank)
            c2 = corrections[1].reshape([1] * rank)
            mk = mk * b1 + g * (1 - b1)
            vk = vk * b2 + g * g * (1 - b2)
            update = (mk * c1) / ((vk * c2).sqrt() + self.eps)
            new_p.append(p - update * self.lr)
            new_m.append(mk)
            new_v.append(vk)
        return [*new_p, *new_m, *new_v, count, loss.inner()]

    def step(self) -> Tensor:
        out = self.captured(self.params, self.m, self.v, self.x, self.targets, self.count)
        n = len(self.params)
        self.params, self.m, self.v = out[:n], out[n : 2 * n], out[2 * n : 3 * n]
        self.count = out[-2]
        return out[-1]

    def complete_step(self) -> Tensor:
        loss = self.step()
        self.fused.flush()
        return loss


def torch_eager(params, x, targets, drop: bool):
    """(one eager training step of the same model in PyTorch, the loss function it runs, the
    parameters); None without torch."""
    if torch is None:
        return None
    dev = torch_device()
    tp = {k: torch.tensor(v, device=dev, requires_grad=True) for k, v in params.items()}
    tx = torch.from_numpy(x).to(dev)
    tt = torch.from_numpy(targets).long().to(dev)

    def loss_fn():
        if not drop:
            return torch_cnn(tp, tx, tt)
        h = F.relu(
            F.batch_norm(
                F.conv2d(tx, tp["c1"], tp["cb1"]), None, None, tp["g1"], tp["be1"], training=True
            )
        )
        h = F.relu(
            F.batch_norm(
                F.conv2d(h, tp["c2"], tp["cb2"]), None, None, tp["g2"], tp["be2"], training=True
            )
        )
        h = F.adaptive_avg_pool2d(h, (8, 8)).flatten(1)
        h = F.dropout(F.relu(h @ tp["w1"] + tp["b1"]), DROPOUT, training=True)
        return F.cross_entropy(h @ tp["w2"] + tp["b2"], tt)

    opt = torch.optim.Adam(tp.values(), lr=1e-3)  # eager: PyTorch's default Adam

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn()
        loss.backward()
        opt.step()

    return step, loss_fn, tp


def torch_steps(params, x, targets, drop: bool, repeats: int) -> tuple[float | None, float | None]:
    """(eager ms, CUDA-graph ms) per step of the same model in PyTorch."""
    eager_step = torch_eager(params, x, targets, drop)
    if eager_step is None:
        return None, None
    step, loss_fn, tp = eager_step
    dev = torch_device()
    eager = time_torch(step, repeats) * 1e3
    if dev != "cuda":
        return eager, None
    # The graph needs an optimizer whose step count lives on the GPU (`capturable`).
    opt = torch.optim.Adam(tp.values(), lr=1e-3, capturable=True)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        loss = loss_fn()
        loss.backward()
        opt.step()
    replay = time_torch(graph.replay, repeats) * 1e3
    return eager, replay


def bench_step(batch: int, repeats: int, drop: bool) -> list[list[str]]:
    rng = np.random.default_rng(3)
    params = init_cnn(rng, 28)
    x = rng.standard_normal((batch, 1, 28, 28), dtype=np.float32)
    targets = rng.integers(0, 10, size=batch)
    label = f"guide CNN step, batch {batch}, Adam{', dropout' if drop else ''}"
    plain = AdamStep(Wgpu, params, x, targets, drop)
    fused_backend = Fusion(Wgpu)
    fused = AdamStep(fused_backend, params, x, targets, drop)
    if not drop:  # dropout masks differ between the two; without it the losses must agree
        want = float(plain.step().into_scalar())
        got = float(fused.step().into_scalar())
        assert abs(got - want) < 1e-4 * max(1.0, abs(want)), (got, want)
    # The framework's Adam: what a user's step runs (`burn.optim.Adam`), as PyTorch's rows run
    # `torch.optim.Adam`. Without dropout its losses must follow the tensor-op update's.
    plain_burn = AdamStep(Wgpu, params, x, targets, drop, burn_adam=True)
    fused_burn = AdamStep(fused_backend, params, x, targets, drop, burn_adam=True)
    if not drop:
        for step in (plain_burn, fused_burn):
            reference = AdamStep(Wgpu, params, x, targets, drop)
            for _ in range(3):
                want, got = float(reference.step().into_scalar()), float(step.step().into_scalar())
                assert abs(got - want) < 1e-4 * max(1.0, abs(want)), (got, want)
    rows = []
    results = {}
    captured = CapturedAdamStep(params, x, targets, drop)
    # Five steps before any timing: the last two replay both recordings (the first replay of
    # each prepares its commands); without dropout they must equal the traced steps.
    reference = None if drop else AdamStep(fused_backend, params, x, targets, drop)
    for _ in range(5):
        got = captured.step()
        want = None if reference is None else reference.step()
    assert captured.captured.replays > 0
    if want is not None:
        want, got = float(want.into_scalar()), float(got.into_scalar())
        assert abs(got - want) < 1e-4 * max(1.0, abs(want))
    for name, step, sync in (
        ("Autodiff(Wgpu)", plain.complete_step, Wgpu.sync),
        ("Autodiff(Fusion(Wgpu))", fused.complete_step, fused_backend.sync),
        ("Autodiff(Wgpu), burn's Adam", plain_burn.complete_step, Wgpu.sync),
        ("Autodiff(Fusion(Wgpu)), burn's Adam", fused_burn.complete_step, fused_backend.sync),
        ("Autodiff(Fusion(Wgpu)), captured step", captured.complete_step, fused_backend.sync),
    ):
        seconds = seconds_per_call(step, sync, repeats)
        host, launches = host_seconds(step, repeats)
        results[name] = seconds * 1e3
        rows.append(
            [
                f"{label}: {name}",
                fmt(seconds * 1e3),
                fmt(1 / seconds),
                str(launches),
                fmt(host * 1e3),
            ]
        )
    if captured.captured.reason is not None:
        rows[-1][0] += f" (not captured: {captured.captured.reason})"
    eager, replay = torch_steps(params, x, targets, drop, repeats)
    dev = torch_device()
    rows.append([f"{label}: torch eager ({dev})", fmt(eager), fmt(eager and 1e3 / eager), "-", "-"])
    rows.append([f"{label}: torch CUDA graph", fmt(replay), fmt(replay and 1e3 / replay), "-", "-"])
    rows.append(
        [
            f"{label}: fused / unfused speed-up",
            ratio(results["Autodiff(Wgpu)"], results["Autodiff(Fusion(Wgpu))"]),
            "-",
            "-",
            "-",
        ]
    )
    return rows


def interleaved(batch: int, rounds: int, steps: int, drop: bool) -> list[str]:
    """The traced steps with burn's Adam (plain and fused) and PyTorch's eager step, timed in
    turn: each round runs `steps` steps of each (a sync after each batch), so a drift of the
    host's speed reaches all three alike; lines with the medians and each round's ratio."""
    rng = np.random.default_rng(3)
    params = init_cnn(rng, 28)
    x = rng.standard_normal((batch, 1, 28, 28), dtype=np.float32)
    targets = rng.integers(0, 10, size=batch)
    fused_backend = Fusion(Wgpu)
    timed = {
        "Autodiff(Wgpu)": (
            AdamStep(Wgpu, params, x, targets, drop, burn_adam=True).complete_step,
            Wgpu.sync,
        ),
        "Autodiff(Fusion(Wgpu))": (
            AdamStep(fused_backend, params, x, targets, drop, burn_adam=True).complete_step,
            fused_backend.sync,
        ),
    }
    eager = torch_eager(params, x, targets, drop)
    if eager is not None:
        timed[f"torch eager ({torch_device()})"] = (eager[0], torch_sync)
    ms: dict[str, list[float]] = {name: [] for name in timed}
    for step, sync in timed.values():  # warm-up: compiles, autotune, allocator
        for _ in range(steps):
            step()
        sync()
    for _ in range(rounds):
        for name, (step, sync) in timed.items():
            start = time.perf_counter()
            for _ in range(steps):
                step()
            sync()
            ms[name].append((time.perf_counter() - start) / steps * 1e3)
    label = f"guide CNN step, batch {batch}, burn's Adam{', dropout' if drop else ''}"
    lines = [f"{label}: {rounds} rounds of {steps} steps each, in turn"]
    for name, values in ms.items():
        lines.append(
            f"  {name}: median {statistics.median(values):.3g} ms "
            f"({min(values):.3g}-{max(values):.3g})"
        )
    torch_ms = next((values for name, values in ms.items() if name.startswith("torch")), None)
    if torch_ms is not None:
        for name in ("Autodiff(Wgpu)", "Autodiff(Fusion(Wgpu))"):
            ratios = sorted(a / b for a, b in zip(ms[name], torch_ms, strict=True))
            lines.append(
                f"  {name} / torch eager, per round: median {statistics.median(ratios):.2f} "
                f"({ratios[0]:.2f}-{ratios[-1]:.2f})"
            )
    return lines


# ---------------------------------------------------------------------- the elementwise chain


def chain(x: Tensor, y: Tensor) -> Tensor:
    """Eight elementwise ops: a scaled, shifted logistic of `x + y`, gated by `x`."""
    t = x * 1.5  # 1
    t = t + y  # 2
    t = t.neg()  # 3
    t = t.exp()  # 4
    t = t + 1.0  # 5
    t = t.recip()  # 6
    t = t * x  # 7
    return t - 0.5  # 8


def bench_chain(n: int, repeats: int) -> list[list[str]]:
    rng = np.random.default_rng(5)
    xs = rng.standard_normal(n, dtype=np.float32)
    ys = rng.standard_normal(n, dtype=np.float32)
    fused_backend = Fusion(Wgpu)
    launches = {}
    times = {}
    outs = {}
    for name, backend, sync in (
        ("unfused (Wgpu)", Wgpu, Wgpu.sync),
        ("fused (Fusion(Wgpu))", fused_backend, fused_backend.sync),
    ):
        x = Tensor[backend, 1].from_data(TensorData(xs), backend.device())
        y = Tensor[backend, 1].from_data(TensorData(ys), backend.device())

        def run(x=x, y=y, backend=backend):
            out = chain(x, y)
            if hasattr(backend, "flush"):
                backend.flush()
            return out

        outs[name] = np.asarray(run().to_data().array)
        rt = Wgpu.runtime()
        before = rt.launches
        run()
        sync()
        launches[name] = rt.launches - before
        times[name] = seconds_per_call(run, sync, repeats)
    np.testing.assert_allclose(
        outs["fused (Fusion(Wgpu))"], outs["unfused (Wgpu)"], rtol=1e-5, atol=1e-6
    )
    bytes_moved = 3 * 4 * n
    rows = []
    for name, seconds in times.items():
        rows.append(
            [
                f"8-op chain on {n} f32, {name}",
                fmt(seconds * 1e3),
                fmt(bytes_moved / seconds / 1e12),
                str(launches[name]),
                "-",
            ]
        )
    rows.append(
        [
            "8-op chain: fused / unfused speed-up",
            ratio(times["unfused (Wgpu)"], times["fused (Fusion(Wgpu))"]),
            "-",
            "-",
            "-",
        ]
    )
    if torch is not None:
        dev = torch_device()
        tx = torch.from_numpy(xs).to(dev)
        ty = torch.from_numpy(ys).to(dev)
        seconds = time_torch(lambda: chain_torch(tx, ty), repeats)
        rows.append(
            [
                f"8-op chain on {n} f32, torch eager ({dev})",
                fmt(seconds * 1e3),
                fmt(bytes_moved / seconds / 1e12),
                "8",
                "-",
            ]
        )
    return rows


def chain_torch(x, y):
    return torch.reciprocal(torch.exp(-(x * 1.5 + y)) + 1.0) * x - 0.5


# ---------------------------------------------------------------------- report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few repeats")
    parser.add_argument("--out", help="write the markdown table to this file")
    parser.add_argument(
        "--results", action="store_true", help=f"write the table as the section {SECTION!r}"
    )
    parser.add_argument(
        "--interleaved",
        type=int,
        metavar="ROUNDS",
        help="time the traced steps with burn's Adam and PyTorch eager in turn, ROUNDS rounds "
        "of 50 steps (10 with --quick); prints the medians and per-round ratios, writes nothing",
    )
    args = parser.parse_args()
    if args.interleaved:
        batch, steps = (8, 10) if args.quick else (64, 50)
        for drop in (False, True):
            print("\n".join(interleaved(batch, args.interleaved, steps, drop)), flush=True)
        return
    if args.quick:
        batch, elems, repeats = 8, 1 << 16, 2
    else:
        batch, elems, repeats = 64, 1 << 26, 20

    rt = Wgpu.runtime()
    peer = "none (torch not installed)"
    if torch is not None:
        dev = torch_device()
        name = torch.cuda.get_device_name() if dev == "cuda" else platform.processor() or "CPU"
        peer = f"torch {torch.__version__} on {dev} ({name})"
    rows = bench_step(batch, repeats, drop=False)
    rows += bench_step(batch, repeats, drop=True)
    rows += bench_chain(elems, repeats)
    header = ["benchmark", "ms", "per s (steps/s; TB/s for the chain)", "launches", "host ms"]
    driver = rt.info.get("description") or "?"
    lines = [
        f"Wgpu on {rt.describe()}, driver {driver}, wgpu-py {wgpu.__version__}; peer: {peer}; "
        f"{datetime.date.today().isoformat()}",
        f"{'quick' if args.quick else 'full'} sizes; host ms: the step with GPU submissions "
        "skipped (Python, the tensor layers and command recording)",
    ]
    emit(lines, header, rows, args.out, SECTION if args.results else None)


if __name__ == "__main__":
    main()
