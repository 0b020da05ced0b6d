"""`InfoLayout`: the one declaration of a kernel's info words. Packing by name is checked on
the host; that the emitted WGSL accessors read back exactly what `pack` wrote is checked on
the device, for every layout the kernels declare."""

from __future__ import annotations

import re

import numpy as np
import pytest
from burn.tensor import BurnError, DType
from burn.wgpu import Wgpu
from burn.wgpu import kernels as K
from burn.wgpu.kernels.layout import (
    Dims,
    InfoLayout,
    InfoLayoutError,
    Strided,
    Word,
    prune_functions,
)
from burn.wgpu.kernels.wgsl import header

EXAMPLE = InfoLayout(
    "example",
    Word("n"),
    Word("rank"),
    Dims("shape"),
    Strided("a"),
    Dims("strides", extra=2),
    Word("value"),
)

LAYOUTS = sorted(
    (v for v in vars(K).values() if isinstance(v, InfoLayout)), key=lambda layout: layout.name
)


def test_pack_puts_each_field_where_the_declaration_says():
    words = EXAMPLE.pack(n=6, shape=(2, 3), a=(0, 5, 3, 1), strides=(9, 8, 7, 6), value=42)
    assert words == [6, 2, 2, 3, 0, 5, 3, 1, 9, 8, 7, 6, 42]
    explicit = EXAMPLE.pack(
        n=6, rank=2, shape=(2, 3), a=(0, 5, 3, 1), strides=(9, 8, 7, 6), value=42
    )
    assert explicit == words  # the rank word, left out, is the first per-dim field's length
    assert EXAMPLE.starts == {
        "n": (0, 0),
        "rank": (1, 0),
        "shape": (2, 0),
        "a": (2, 1),
        "strides": (4, 2),
        "value": (6, 3),
    }


@pytest.mark.parametrize(
    "words, message",
    [
        (dict(n=1, shape=(2,), a=(1, 0, 1), strides=(1, 1, 1)), r"missing \['value'\]"),
        (dict(n=1, shape=(2,), a=(1, 0, 1), strides=(1, 1, 1), value=0, b=3), r"unknown \['b'\]"),
        (dict(n=1, shape=(2,), a=(1, 0), strides=(1, 1, 1), value=0), "a has 2 words, expected 3"),
        (dict(n=1, rank=2, shape=(2,), a=(1, 0, 1), strides=(1, 1, 1), value=0), "shape has 1"),
        (dict(n=1, shape=(2,), a=(1, 0, 1), strides=(1, 1), value=0), r"expected 3 \(rank 1 \+ 2"),
        (dict(n=1, shape=3, a=(1, 0, 1), strides=(1, 1, 1), value=0), "has no len"),
    ],
)
def test_pack_names_the_layout_and_the_field_that_is_wrong(words, message):
    with pytest.raises(InfoLayoutError, match=message) as caught:
        EXAMPLE.pack(**words)
    assert isinstance(caught.value, BurnError)
    assert "info layout example" in str(caught.value)


@pytest.mark.parametrize(
    "fields, message",
    [
        ((Word("n"), Dims("shape"), Word("rank")), "must come before every per-dim field"),
        ((Word("n"), Dims("shape")), "must come before"),
        ((Word("rank"), Strided("a", over="size")), "read over .size."),
        ((Word("rank"), Word("shape"), Strided("a")), "read over .shape."),
        ((Word("rank"), Word("rank")), "duplicate"),
        ((Word("rank"), Word("class")), "plain identifiers"),
        ((Word("rank"), Word("_hidden")), "plain identifiers"),
    ],
)
def test_bad_declarations_are_refused(fields, message):
    with pytest.raises(InfoLayoutError, match=message):
        InfoLayout("bad", *fields)


def test_the_wgsl_accessors_read_each_field_from_its_start():
    source = EXAMPLE.wgsl()
    assert "// info words (example): n, rank, shape[rank]," in source
    assert "fn info_n() -> u32 { return info[0u]; }" in source
    assert "fn info_shape(d: u32) -> u32 { return info[2u + d]; }" in source
    assert "fn info_a_offset() -> u32 { return info[2u + info[1u] + 1u]; }" in source
    assert "fn info_a_strides_at() -> u32 { return 4u + info[1u]; }" in source
    assert "fn info_strides_at() -> u32 { return 4u + 2u * info[1u]; }" in source
    assert "fn info_value() -> u32 { return info[6u + 3u * info[1u]]; }" in source
    # A layout without per-dim fields reads constants only.
    assert "fn info_value() -> u32 { return info[1u]; }" in K.FILL.wgsl()
    assert K.FILL.wgsl() is K.FILL.wgsl()  # emitted once


def test_kernels_keep_only_the_functions_they_call():
    source = K.binary("add", DType.F32, False)
    kept = set(re.findall(r"^fn (\w+)\(", source, re.MULTILINE))
    # info_a_index walks the dims with info_strided over info_shape_at; nothing calls the
    # other accessors, nor the float helpers (pow_, erf_, ...) that other ops need.
    assert kept == {
        "main",
        "info_n",
        "info_a_index",
        "info_b_index",
        "info_strided",
        "info_shape_at",
    }
    assert "// info words (binary)" in source
    assert "erf" not in K.unary("exp", DType.F32)  # its helper and the comment above it
    assert "fn erf_(" in K.unary("erf", DType.F32)
    full = (
        header(K.BINARY, [])
        + "// helps\nfn unused() -> u32 { return 1u; }\n"
        + "fn main() {\n    let x = info_b_strides(0u);\n}\n"
    )
    pruned = prune_functions(full)
    assert set(re.findall(r"^fn (\w+)\(", pruned, re.MULTILINE)) == {"main", "info_b_strides"}
    assert "helps" not in pruned and pruned.endswith("info_b_strides(0u);\n}\n")
    assert prune_functions("fn f() {}") == "fn f() {}"  # no entry point: left as it is


def _sample(layout: InfoLayout, rank: int) -> dict:
    """Distinct values for every field (`rank` dims), so a misplaced read shows."""
    words, counter = {}, iter(range(100, 10_000))
    for f in layout.fields:
        if f.name == layout.rank:
            words[f.name] = rank
        elif isinstance(f, Word):
            words[f.name] = next(counter)
        elif isinstance(f, Dims):
            words[f.name] = [next(counter) for _ in range(rank + f.extra)]
        else:
            words[f.name] = [0] + [next(counter) for _ in range(rank + 1)]
    return words


def _read_back(layout: InfoLayout, words: dict) -> list[str]:
    """WGSL statements writing every field, through its accessors, to `out` in pack order."""
    reads = []
    for f in layout.fields:
        if isinstance(f, Word):
            reads.append(f"info_{f.name}()")
        elif isinstance(f, Dims):
            reads += [f"info_{f.name}({d}u)" for d in range(len(words[f.name]))]
        else:
            flag = f"info[info_{f.name}_strides_at() - 2u]"
            strides = [f"info_{f.name}_strides({d}u)" for d in range(len(words[f.name]) - 2)]
            reads += [flag, f"info_{f.name}_offset()", *strides]
    return [f"    out[{i}] = {read};" for i, read in enumerate(reads)]


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: layout.name)
def test_every_kernel_layout_reads_back_what_pack_wrote(layout):
    rt = Wgpu.runtime()
    for rank in (1, 3):
        words = _sample(layout, rank)
        packed = layout.pack(**words)
        source = (
            header(layout, [("out", "u32", "rw")])
            + "@compute @workgroup_size(1)\nfn main() {\n"
            + "\n".join(_read_back(layout, words))
            + "\n}\n"
        )
        out = Wgpu._empty((len(packed),), DType.I32, Wgpu.device(), rt)
        rt.launch(source, ("rw",), (out.handle,), packed, 1)
        np.testing.assert_array_equal(Wgpu.into_data(out).array, packed)


def test_a_strided_operand_index_follows_its_strides_or_its_offset():
    layout = InfoLayout("index", Word("n"), Word("rank"), Dims("shape"), Strided("a"))
    source = (
        header(layout, [("out", "u32", "rw")])
        + "@compute @workgroup_size(1)\nfn main() {\n"
        + "    for (var i = 0u; i < info_n(); i = i + 1u) { out[i] = info_a_index(i); }\n}\n"
    )
    rt = Wgpu.runtime()
    cases = [
        ((2, 3), [0, 7, 1, 2]),  # a transposed [3, 2] view at offset 7
        ((2, 3), [0, 0, 0, 1]),  # a row broadcast over dim 0
        ((2, 3), [1, 5, 3, 1]),  # contiguous from offset 5
    ]
    for shape, block in cases:
        n = int(np.prod(shape))
        out = Wgpu._empty((n,), DType.I32, Wgpu.device(), rt)
        rt.launch(source, ("rw",), (out.handle,), layout.pack(n=n, shape=shape, a=block), 1)
        coords = np.indices(shape).reshape(len(shape), -1)
        expected = block[1] + (np.asarray(block[2:])[:, None] * coords).sum(0)
        np.testing.assert_array_equal(Wgpu.into_data(out).array, expected)


def test_a_custom_kernel_reads_a_strided_view_through_its_own_layout():
    """The custom-kernel API takes the same declaration: `out = x * scale` over any view."""
    from burn.tensor import Tensor
    from burn.wgpu import KernelSource, WorkGroup, empty, launch
    from burn.wgpu.backend import scalar_bits
    from burn.wgpu.primitive import block

    layout = InfoLayout(
        "scale", Word("n"), Word("rank"), Dims("shape"), Strided("x"), Word("scale")
    )
    template = """
@group(0) @binding(0) var<storage, read> x: array<{{ elem }}>;
@group(0) @binding(1) var<storage, read_write> out: array<{{ elem }}>;
@group(0) @binding(2) var<storage, read> info: array<u32>;

@compute @workgroup_size({{ workgroup_size_x }}, 1, 1)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= info_n()) { return; }
    out[id.x] = x[info_x_index(id.x)] * bitcast<f32>(info_scale());
}
"""
    kernel = KernelSource(template, workgroup_size=(64, 1), info=layout)
    assert kernel.source().endswith(layout.wgsl())
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = Tensor.from_data(values, Wgpu.device()).swap_dims(0, 1)[1:, :]  # a strided view
    p = x.primitive
    out = empty(x.dims(), x.device())
    info = layout.pack(
        n=p.numel, shape=p.shape, x=block(p, p.shape), scale=scalar_bits(0.5, p.dtype)
    )
    launch(kernel, inputs=[x], outputs=[out], info=info, workgroups=WorkGroup(1))
    np.testing.assert_array_equal(out.to_data().array, values.T[1:, :] * 0.5)


def test_info_layout_names_the_words_build_info_writes():
    from burn.tensor import Tensor
    from burn.wgpu import build_info, info_layout

    a = Tensor.from_data(np.zeros((2, 3), np.float32), Wgpu.device())
    b = a.swap_dims(0, 1)
    layout = info_layout("a", "b")
    assert [f.name for f in layout.fields] == [
        "rank",
        "a_strides",
        "a_shape",
        "b_strides",
        "b_shape",
    ]
    packed = layout.pack(a_strides=(3, 1), a_shape=(2, 3), b_strides=(1, 3), b_shape=(3, 2))
    assert packed == build_info(a, b)


def _every_kernel() -> list[str]:
    """A source of every kernel generator (both forms where a flag changes the info read)."""
    f32, i32 = DType.F32, DType.I32
    return [
        K.unary("exp", f32),
        K.unary_vec4("abs", i32),
        K.binary("add", f32, False),
        K.binary("pow", i32, True),
        K.binary_vec4("mul", f32, False),
        K.binary_vec4("lt", f32, True),
        K.mask_where(f32),
        K.copy(f32, DType.BOOL),
        K.fill(i32),
        K.arange(i32),
        K.random("normal", f32),
        K.reduce("sum", f32, True),
        K.reduce("argmax", f32, False),
        K.reduce("sum", f32, False, True, 128, True),
        K.gather(f32),
        K.scatter_add(f32),
        K.iota_rows(),
        K.bitonic_step(f32, True),
        K.matmul(f32, 16, 16, 8, 2, 2),
        K.matmul_vec4(64, 64, 16, 4, 4, True, False, True),
        K.im2col(f32, (3, (3, 3), (5, 4), (2, 1), (1, 2), (1, 0), (10, 8))),
        K.col2im(f32, (3, (3, 3), (5, 4), (2, 1), (1, 2), (1, 0), (10, 8))),
        K.resample(f32),
    ]


def test_no_kernel_reads_info_words_but_through_its_layout():
    for source in _every_kernel():
        # Drop the accessors: one-line functions, or up to the `}` line that ends them.
        one_line = r"^fn info_\w+\([^\n]*\}\n"
        multi_line = r"^fn info_\w+\([^\n]*\{\n.*?^\}\n"
        outside = re.sub(f"{one_line}|{multi_line}", "", source, flags=re.M | re.S)
        assert "info[" not in outside, outside
        assert "info_" in source
