"""WGSL sources for the Wgpu backend's kernels, one module per family.

Each generator returns the source of one kernel specialised on what changes the generated
code (op, element types, tile sizes); everything else (shapes, strides, offsets, scalars) is
read at run time from the `info` words, so one pipeline serves every shape and rank. Each
family declares its info words once, as an `InfoLayout` next to its generators: launch sites
pack the words by name with `LAYOUT.pack(...)`, and the kernel reads them through the
accessors the layout emits into its source (`layout.py` says how).

Generators are decorated with `wgsl.kernel`: their source keeps only the functions it calls
(the unused accessors and helpers are dropped before the shader compiler sees them), and is
cached, so a launch asking for it again and again gets back the same string object, which is
cheap to look up in the pipeline cache.

| module | kernels |
|---|---|
| `elementwise` | unary, binary (tensor or scalar rhs), their vec4 forms, `mask_where` |
| `copying` | the strided copy with dtype conversion (contiguous, cast, slice_assign, cat) |
| `creation` | `fill`, `arange` |
| `rng` | uniform, normal and bernoulli draws from a counter-based generator |
| `reduction` | sum, prod, max, min, argmax, argmin and mean along a dim |
| `indexing` | `gather`, `scatter_add` |
| `sort` | a stable bitonic sort |
| `matrix` | tiled batched matmul, and its vec4 form |
| `optim` | one parameter's Adam (or AdamW) step |
| `activation` | relu's backward, log-softmax and its backward |
| `norm` | batch norm's statistics and normalization, and their backward; a sum per channel |
| `conv` | `im2col`, `col2im`, each made for one convolution geometry |
| `resampling` | separable resampling by a table of taps |

`wgsl` holds what they share (element types, the binding header, the 1-D entry point) and
`expressions` the WGSL expression of each elementwise op.
"""

from burn.wgpu.kernels.activation import (
    RELU_BACKWARD,
    ROWS,
    log_softmax,
    log_softmax_backward,
    relu_backward,
)
from burn.wgpu.kernels.conv import COL2IM, IM2COL, col2im, im2col
from burn.wgpu.kernels.copying import COPY, convert, copy
from burn.wgpu.kernels.creation import ARANGE, FILL, arange, fill
from burn.wgpu.kernels.elementwise import (
    BINARY,
    BINARY_SCALAR,
    BINARY_SCALAR_VEC4,
    BINARY_VEC4,
    MASK_WHERE,
    UNARY,
    UNARY_VEC4,
    binary,
    binary_vec4,
    mask_where,
    unary,
    unary_vec4,
)
from burn.wgpu.kernels.expressions import binary_expr, unary_expr
from burn.wgpu.kernels.indexing import GATHER, SCATTER_ADD, gather, scatter_add
from burn.wgpu.kernels.layout import Dims, InfoLayout, InfoLayoutError, Strided, Word
from burn.wgpu.kernels.loss import CROSS_ENTROPY, cross_entropy, cross_entropy_backward
from burn.wgpu.kernels.matrix import MATMUL, matmul, matmul_vec4
from burn.wgpu.kernels.norm import (
    CHANNELS,
    batch_norm_apply,
    batch_norm_grad_stats,
    batch_norm_stats,
    batch_norm_x_grad,
    sum_per_channel,
)
from burn.wgpu.kernels.optim import ADAM, ADAM_MANY, ADAM_SCALARS, adam_step, adam_step_many
from burn.wgpu.kernels.reduction import REDUCE, reduce
from burn.wgpu.kernels.resampling import RESAMPLE, resample
from burn.wgpu.kernels.rng import DROPOUT, RANDOM, dropout, random
from burn.wgpu.kernels.sort import BITONIC_STEP, IOTA_ROWS, bitonic_step, iota_rows
from burn.wgpu.kernels.wgsl import VEC_DTYPES, WG, compute, store
from burn.wgpu.kernels.windows import WINDOWS, window_mean, window_mean_backward

__all__ = [
    "ADAM",
    "ADAM_MANY",
    "ADAM_SCALARS",
    "ARANGE",
    "BINARY",
    "BINARY_SCALAR",
    "BINARY_SCALAR_VEC4",
    "BINARY_VEC4",
    "BITONIC_STEP",
    "CHANNELS",
    "COL2IM",
    "COPY",
    "CROSS_ENTROPY",
    "DROPOUT",
    "Dims",
    "FILL",
    "GATHER",
    "IM2COL",
    "IOTA_ROWS",
    "InfoLayout",
    "InfoLayoutError",
    "MASK_WHERE",
    "MATMUL",
    "RANDOM",
    "REDUCE",
    "RELU_BACKWARD",
    "RESAMPLE",
    "ROWS",
    "SCATTER_ADD",
    "Strided",
    "UNARY",
    "UNARY_VEC4",
    "VEC_DTYPES",
    "WG",
    "WINDOWS",
    "Word",
    "adam_step",
    "adam_step_many",
    "arange",
    "batch_norm_apply",
    "batch_norm_grad_stats",
    "batch_norm_stats",
    "batch_norm_x_grad",
    "binary",
    "binary_expr",
    "binary_vec4",
    "bitonic_step",
    "col2im",
    "cross_entropy",
    "cross_entropy_backward",
    "dropout",
    "compute",
    "convert",
    "copy",
    "fill",
    "gather",
    "im2col",
    "iota_rows",
    "log_softmax",
    "log_softmax_backward",
    "mask_where",
    "matmul",
    "matmul_vec4",
    "random",
    "reduce",
    "relu_backward",
    "resample",
    "scatter_add",
    "store",
    "sum_per_channel",
    "unary",
    "unary_expr",
    "unary_vec4",
    "window_mean",
    "window_mean_backward",
]
