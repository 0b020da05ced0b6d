"""The tutorial's capstone (step 10): an MLP learns XOR with a manual training loop.

Adam at lr 1e-3, batches of 32 from 800 shuffled samples, cross-entropy, functional
`model = optim.step(lr, model, grads)`, then inference on the inner backend after `valid()`.
"""

from __future__ import annotations

import gc

import numpy as np
from burn.backend import Autodiff, NdArray
from burn.config import config
from burn.module import Module
from burn.nn import Linear, LinearConfig, Relu
from burn.nn.loss import CrossEntropyLossConfig
from burn.optim import AdamConfig, GradientsParams
from burn.tensor import Tensor

TrainB = Autodiff(NdArray)


class XorModel(Module):
    def __init__(self, fc1: Linear, fc2: Linear, fc3: Linear):
        self.fc1 = fc1
        self.fc2 = fc2
        self.fc3 = fc3
        self.relu = Relu()

    def forward(self, x: Tensor) -> Tensor:
        x = self.relu.forward(self.fc1.forward(x))
        x = self.relu.forward(self.fc2.forward(x))
        return self.fc3.forward(x)


@config
class XorModelConfig:
    input: int = 2
    hidden: int = 16
    output: int = 2

    def init(self, device) -> XorModel:
        return XorModel(
            LinearConfig(self.input, self.hidden).init(device),
            LinearConfig(self.hidden, self.hidden).init(device),
            LinearConfig(self.hidden, self.output).init(device),
        )


PATTERNS = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]], dtype=np.float32)
LABELS = np.array([0, 1, 1, 0])


def accuracy(model: XorModel) -> float:
    valid = model.valid()  # drops autodiff: the same model on NdArray
    logits = valid.forward(Tensor.from_data(PATTERNS, NdArray.device()))
    assert logits.backend is NdArray
    predicted = logits.argmax(1).to_data().as_array().ravel()
    return float((predicted == LABELS).mean())


def test_xor_trains_to_full_accuracy():
    TrainB.seed(7)
    device = TrainB.device()
    xs = np.tile(PATTERNS, (200, 1))
    ys = np.tile(LABELS, 200)
    model = XorModelConfig().init(device)
    optim = AdamConfig().init()
    loss_fn = CrossEntropyLossConfig().init(device)
    rng = np.random.default_rng(42)
    lr, batch_size = 1e-3, 32
    history = []
    for _epoch in range(50):
        order = rng.permutation(len(xs))
        total = 0.0
        for start in range(0, len(xs), batch_size):
            rows = order[start : start + batch_size]
            inputs = Tensor.from_data(xs[rows], device)
            targets = Tensor.from_data(ys[rows], device)
            loss = loss_fn.forward(model.forward(inputs), targets)
            grads = GradientsParams.from_grads(loss.backward(), model)
            model = optim.step(lr, model, grads)
            total += float(loss.into_scalar())
        history.append(total)
        if accuracy(model) == 1.0 and total / 25 < 0.3:  # the exercise's early stop
            break
    assert accuracy(model) == 1.0
    assert history[-1] < history[0] / 2


def test_a_training_step_leaves_no_reference_cycles():
    """A step (forward, loss, backward, the optimizer's update of every parameter) frees what
    it made by reference counting alone: nothing waits for the garbage collector (whose full
    collections over a large program's objects stopped a training loop for about 0.1 s every
    couple of thousand steps), and old parameters, and the device buffers they own, are
    released at once."""
    device = TrainB.device()
    model = XorModelConfig().init(device)
    optim = AdamConfig().init()
    loss_fn = CrossEntropyLossConfig().init(device)
    x = Tensor.from_data(np.tile(PATTERNS, (8, 1)), device)
    y = Tensor.from_data(np.tile(LABELS, 8), device)

    def step(model):
        loss = loss_fn.forward(model.forward(x), y)
        grads = GradientsParams.from_grads(loss.backward(), model)
        return optim.step(1e-3, model, grads)

    model = step(model)  # the first step creates the optimizer's state
    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            model = step(model)
        model.named_params(), model.no_grad(), model.num_params()
        assert gc.collect() == 0
    finally:
        gc.enable()
