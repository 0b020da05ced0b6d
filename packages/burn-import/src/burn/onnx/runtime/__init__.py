"""Helpers the generated models call for ONNX ops that are not one `Tensor` method.

Each helper is composed from the public `Tensor` API only, so a generated model runs on every
backend and trains under `Autodiff`. Arguments follow the ONNX op's inputs and attributes (same
names and defaults); index-like inputs (shapes, axes, pads) may be Python lists or Int tensors.
An ONNX scalar is a one-element rank-1 tensor here (burn tensors have at least one dimension).
String values are numpy arrays of `str` on the host (`strings`).
"""

from burn.onnx.runtime.attention import *  # noqa: F403
from burn.onnx.runtime.detection import *  # noqa: F403
from burn.onnx.runtime.grid import *  # noqa: F403
from burn.onnx.runtime.image import *  # noqa: F403
from burn.onnx.runtime.indexing import *  # noqa: F403
from burn.onnx.runtime.integer import *  # noqa: F403
from burn.onnx.runtime.linalg import *  # noqa: F403
from burn.onnx.runtime.loss import *  # noqa: F403
from burn.onnx.runtime.math import *  # noqa: F403
from burn.onnx.runtime.ml import *  # noqa: F403
from burn.onnx.runtime.narrow import *  # noqa: F403
from burn.onnx.runtime.nn import *  # noqa: F403
from burn.onnx.runtime.quantize import *  # noqa: F403
from burn.onnx.runtime.random import *  # noqa: F403
from burn.onnx.runtime.recurrent import *  # noqa: F403
from burn.onnx.runtime.reduce import *  # noqa: F403
from burn.onnx.runtime.resize import *  # noqa: F403
from burn.onnx.runtime.sequence import *  # noqa: F403
from burn.onnx.runtime.sequences import *  # noqa: F403
from burn.onnx.runtime.shape import *  # noqa: F403
from burn.onnx.runtime.spectral import *  # noqa: F403
from burn.onnx.runtime.stateful import *  # noqa: F403
from burn.onnx.runtime.strings import *  # noqa: F403
from burn.onnx.runtime.text import *  # noqa: F403
from burn.onnx.runtime.training import *  # noqa: F403
from burn.onnx.runtime.trees import *  # noqa: F403
