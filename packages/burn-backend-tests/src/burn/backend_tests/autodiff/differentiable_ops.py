"""The one list of differentiable ops that the autodiff suite checks.

Every name here must be exercised twice: by finite differences (`gradcheck.check_grads`, in
the `test_ad_*.py` files) and against torch.autograd (a row of `test_ad_torch.CASES`).
`test_ad_coverage.py` and `test_ad_torch.py` fail when either side misses a name, so adding an
op means adding it here and to both sides.

Names are methods of `Tensor` unless prefixed: `activation.*` are functions of
`burn.tensor.activation`, `module.*` of `burn.tensor.module` (interpolate once per mode).
`r*_scalar` are the reflected forms (`2.0 - x`), `getitem` is `t[...]`.
"""

from __future__ import annotations

UNARY = (
    "neg", "abs", "exp", "log", "log1p", "sqrt", "sin", "cos", "tan", "tanh", "erf", "recip",
    "floor", "ceil", "round", "sign", "square",
)  # fmt: skip
BINARY = ("add", "sub", "mul", "div", "powf", "powi", "remainder", "max_pair", "min_pair", "atan2")
SCALAR = (
    "add_scalar", "radd_scalar", "sub_scalar", "rsub_scalar", "mul_scalar", "rmul_scalar",
    "div_scalar", "rdiv_scalar", "powf_scalar", "rpow_scalar", "powi_scalar", "remainder_scalar",
)  # fmt: skip
REDUCTION = (
    "sum", "sum_dim", "sum_dims", "mean", "mean_dim", "mean_dims", "prod", "prod_dim", "max",
    "min", "max_abs", "max_dim", "min_dim", "max_dims", "min_dims", "max_dim_with_indices",
    "min_dim_with_indices", "var", "var_bias", "var_mean", "var_mean_bias",
)  # fmt: skip
LAYOUT = (
    "reshape", "flatten", "squeeze", "squeeze_dims", "unsqueeze", "unsqueeze_dim",
    "unsqueeze_dims", "permute", "swap_dims", "transpose", "t", "movedim", "expand", "flip",
    "slice", "slice_assign", "slice_fill", "narrow", "chunk", "split", "split_with_sizes",
    "iter_dim", "cat", "stack", "repeat", "repeat_dim", "pad", "getitem",
)  # fmt: skip
INDEXING = (
    "gather", "scatter", "select", "select_assign", "mask_where", "mask_fill", "tril", "triu",
)  # fmt: skip
OTHER = (
    "matmul", "dot", "clamp", "clamp_min", "clamp_max", "sort", "sort_descending",
    "sort_with_indices", "sort_descending_with_indices", "topk", "topk_with_indices", "cast",
)  # fmt: skip
ACTIVATION = tuple(
    f"activation.{n}"
    for n in (
        "relu", "gelu", "sigmoid", "silu", "tanh", "softplus", "mish", "leaky_relu",
        "log_sigmoid", "hard_sigmoid", "prelu", "softmax", "log_softmax", "quiet_softmax",
    )
)  # fmt: skip
MODULE = tuple(
    f"module.{n}"
    for n in (
        "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
        "conv_transpose3d", "avg_pool1d", "avg_pool2d", "max_pool1d", "max_pool2d",
        "max_pool1d_with_indices", "max_pool2d_with_indices", "adaptive_avg_pool1d",
        "adaptive_avg_pool2d", "interpolate_nearest", "interpolate_bilinear",
        "interpolate_bicubic", "embedding", "unfold4d", "layer_norm", "batch_norm",
        "attention", "lstm", "gru",
    )
)  # fmt: skip

DIFFERENTIABLE_OPS: tuple[str, ...] = (
    UNARY + BINARY + SCALAR + REDUCTION + LAYOUT + INDEXING + OTHER + ACTIVATION + MODULE
)

# How a finite-difference test spells an op where it is not `.name(` (operators, reflected
# scalars, ops picked by a string). `test_ad_coverage.py` looks for these in the test sources.
FD_SPELLING = {
    "add": "a + b",
    "sub": "a - b",
    "mul": "a * b",
    "div": "a / b",
    "radd_scalar": "5.0 + a",
    "rsub_scalar": "5.0 - a",
    "rmul_scalar": "-0.5 * a",
    "rdiv_scalar": "2.0 / a",
    "rpow_scalar": "2.0**a",
    "getitem": "lambda t: t[",
    **{f"module.{n}": f'"{n}"' for n in ("conv1d", "conv2d", "conv3d")},
    **{f"module.conv_transpose{d}d": f'"conv_transpose{d}d"' for d in (1, 2, 3)},
    **{f"module.interpolate_{m}": f'"{m}"' for m in ("nearest", "bilinear", "bicubic")},
}


def fd_spelling(op: str) -> str:
    """The text a finite-difference test of `op` contains."""
    if op in FD_SPELLING:
        return FD_SPELLING[op]
    if op.startswith(("activation.", "module.")):
        return op
    return f".{op}("


def op_of_case(name: str) -> str:
    """The op a torch row checks: its name up to an optional `:variant` suffix."""
    return name.partition(":")[0]
