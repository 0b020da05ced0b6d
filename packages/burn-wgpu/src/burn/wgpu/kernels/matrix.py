"""Matmul: a tiled, register-blocked, batched kernel over strided operands of any dtype, and
a vec4 form for contiguous f32 operands.

Loops over register tiles are unrolled here, in Python, so every accumulator is a named
variable the shader compiler can keep in registers. Tile shapes are parameters of the
generators; autotune picks them per device and shape class.

Both kernels take an optional `epilogue`: WGSL declaring `fn epilogue(value, i)` (and, for the
vec4 kernel, `fn epilogue4(values, i)` for four consecutive outputs) with the bindings it uses
from binding 3 on. The kernel then binds no output of its own: each product is handed to the
epilogue with its index in the contiguous `[..., m, n]` result, and the epilogue computes and
stores whatever follows the matmul (`burn.wgpu.fusion.epilogue`).
"""

from __future__ import annotations

from burn.tensor import DType
from burn.wgpu.kernels.layout import Dims, InfoLayout, Word
from burn.wgpu.kernels.wgsl import compute, header, kernel, store

# C[m, n] = A[m, k] @ B[k, n] for each of `batches` matrices; the batch dims broadcast.
# Each operand's strides cover the batch dims, then its row and column strides.
MATMUL = InfoLayout(
    "matmul",
    Word("m"),
    Word("n"),
    Word("k"),
    Word("batches"),
    Word("batch_rank"),
    Dims("batch_shape"),
    Word("a_offset"),
    Dims("a_strides", extra=2),
    Word("b_offset"),
    Dims("b_strides", extra=2),
    rank="batch_rank",
)

_MATMUL_BATCH = """
    let M = info_m();
    let N = info_n();
    let K = info_k();
    let br = info_batch_rank();
    let row_tiles = (M + {bm1}u) / {bm}u;
    let linear = wid.z * nwg.y + wid.y;
    let batch = linear / row_tiles;
    if (batch >= info_batches()) {{ return; }}
    let tile_row = linear % row_tiles;
    var a_base = info_a_offset();
    var b_base = info_b_offset();
    var rem = batch;
    var d = br;
    loop {{
        if (d == 0u) {{ break; }}
        d = d - 1u;
        let size = info_batch_shape(d);
        let c = rem % size;
        rem = rem / size;
        a_base = a_base + c * info_a_strides(d);
        b_base = b_base + c * info_b_strides(d);
    }}
    let a_rs = info_a_strides(br);
    let a_cs = info_a_strides(br + 1u);
    let b_rs = info_b_strides(br);
    let b_cs = info_b_strides(br + 1u);
    let row0 = tile_row * {bm}u;
    let col0 = wid.x * {bn}u;
    let tx = lid3.x;
    let ty = lid3.y;
    let out_base = batch * M * N;
"""

_MATMUL_ENTRY = """
@compute @workgroup_size({tx}, {ty}, 1)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid3: vec3<u32>,
        @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) nwg: vec3<u32>) {{
"""


def _bindings(element: str, epilogue: str | None) -> list[tuple[str, str, str]]:
    """The data bindings: the operands, and the output unless an epilogue stores instead."""
    operands = [("a", element, "r"), ("b", element, "r")]
    return operands if epilogue is not None else [*operands, ("out", element, "rw")]


@kernel
def matmul(
    dtype: DType, bm: int, bn: int, bk: int, tm: int, tn: int, epilogue: str | None = None
) -> str:
    """Tiled, register-blocked batched matmul over strided operands (any layout, any dtype).

    A workgroup computes a BM x BN output tile with (BN/TN) x (BM/TM) threads; each thread
    holds TM x TN accumulators for rows `ty + i * TY` and columns `tx + j * TX` (interleaved,
    so stores are coalesced). Tiles of A and B go through workgroup memory BK at a time.
    Layout `MATMUL`; workgroups = (column tiles, row tiles x batches over y and z).
    """
    t, c = store(dtype), compute(dtype)
    tx, ty = bn // tn, bm // tm
    nt = tx * ty
    zero = "0.0" if dtype.is_float else "0"
    decl = "\n".join(f"    var acc{i}_{j}: {c} = {zero};" for i in range(tm) for j in range(tn))
    inner = []
    for i in range(tm):
        inner.append(f"            let ar{i} = As[kk * {bm}u + ty + {i * ty}u];")
    for j in range(tn):
        inner.append(f"            let br{j} = Bs[kk * {bn}u + tx + {j * tx}u];")
    for i in range(tm):
        for j in range(tn):
            update = (
                f"fma(ar{i}, br{j}, acc{i}_{j})"
                if dtype.is_float
                else f"acc{i}_{j} + ar{i} * br{j}"
            )
            inner.append(f"            acc{i}_{j} = {update};")
    stores = []
    for i in range(tm):
        stores.append(f"    {{\n        let gm = row0 + ty + {i * ty}u;")
        stores.append("        if (gm < M) {")
        for j in range(tn):
            at = f"out_base + gm * N + col0 + tx + {j * tx}u"
            if epilogue is None:
                put = f"out[{at}] = {t}(acc{i}_{j});"
            else:
                put = f"epilogue(acc{i}_{j}, {at});"
            stores.append(f"            if (col0 + tx + {j * tx}u < N) {{ {put} }}")
        stores.append("        }\n    }")
    return (
        header(MATMUL, _bindings(t, epilogue), dtype)
        + (epilogue or "")
        + f"""
var<workgroup> As: array<{c}, {bm * bk}>;
var<workgroup> Bs: array<{c}, {bn * bk}>;
"""
        + _MATMUL_ENTRY.format(tx=tx, ty=ty)
        + _MATMUL_BATCH.format(bm=bm, bm1=bm - 1, bn=bn)
        + decl
        + f"""
    for (var k0 = 0u; k0 < K; k0 = k0 + {bk}u) {{
        for (var e = lid; e < {bm * bk}u; e = e + {nt}u) {{
            let m = e / {bk}u;
            let kk = e % {bk}u;
            let gm = row0 + m;
            let gk = k0 + kk;
            var v: {c} = {zero};
            if (gm < M && gk < K) {{ v = {c}(a[a_base + gm * a_rs + gk * a_cs]); }}
            As[kk * {bm}u + m] = v;
        }}
        for (var e = lid; e < {bn * bk}u; e = e + {nt}u) {{
            let kk = e / {bn}u;
            let n = e % {bn}u;
            let gk = k0 + kk;
            let gn = col0 + n;
            var v: {c} = {zero};
            if (gk < K && gn < N) {{ v = {c}(b[b_base + gk * b_rs + gn * b_cs]); }}
            Bs[kk * {bn}u + n] = v;
        }}
        workgroupBarrier();
        for (var kk = 0u; kk < {bk}u; kk = kk + 1u) {{
"""
        + "\n".join(inner)
        + """
        }
        workgroupBarrier();
    }
"""
        + "\n".join(stores)
        + "\n}\n"
    )


def _tile_loads(
    name: str,
    rows: int,
    bk: int,
    nt: int,
    k_major: bool,
    strides: tuple[str, str],
    lim: str,
    exact: bool = False,
) -> tuple[list[str], list[str]]:
    """WGSL lines loading one BK-deep vec4 tile of `name` into registers, then into shared.

    The tile is `rows` (BM of A, or BN of B) by BK, stored in workgroup memory k-major as
    vec4s of 4 consecutive rows: `S[kk * rows / 4 + row / 4]`. With `k_major` the operand is
    contiguous along k (4 consecutive k per global vec4, transposed on the way into shared
    memory); otherwise it is contiguous along the rows (a global vec4 is a shared vec4).
    `strides` are the WGSL names of the row and k strides, `lim` the row count (M or N).
    `exact`: the tile lies inside the operand (no bounds checks).
    Returns (loads into registers `{name}r{l}`, stores into shared `{name}s`).
    """
    total = rows * bk // 4
    loads, stores = [], []
    base, (rs, ks) = f"{name}_base", strides
    row_word = "row0" if name == "a" else "col0"
    for n in range(-(-total // nt)):
        e = f"(lid + {n * nt}u)"
        guard = f"{e} < {total}u && " if (n + 1) * nt > total else ""
        reg = f"{name}r{n}"
        if k_major:
            row, kq = f"({e} / {bk // 4}u)", f"({e} % {bk // 4}u)"
            g_row, g_k = f"{row_word} + {row}", f"k0 + {kq} * 4u"
            index = f"({base} + ({g_row}) * {rs} + {g_k}) / 4u"
        else:
            kk, rq = f"({e} / {rows // 4}u)", f"({e} % {rows // 4}u)"
            g_row, g_k = f"{row_word} + {rq} * 4u", f"k0 + {kk}"
            index = f"({base} + ({g_k}) * {ks} + {g_row}) / 4u"
        if exact:
            if guard:
                loads.append(f"        {reg} = vec4<f32>(0.0);")
                loads.append(f"        if ({guard[:-4]}) {{ {reg} = {name}[{index}]; }}")
            else:
                loads.append(f"        {reg} = {name}[{index}];")
        else:
            loads.append(f"        {reg} = vec4<f32>(0.0);")
            check = f"{guard}{g_row} < {lim} && {g_k} < K"
            loads.append(f"        if ({check}) {{ {reg} = {name}[{index}]; }}")
        if k_major:
            slot = f"{row} / 4u][{row} % 4u]"
            st = [
                f"{name}s[({kq} * 4u + {q}u) * {rows // 4}u + {slot} = {reg}.{comp};"
                for q, comp in enumerate("xyzw")
            ]
            body = " ".join(st)
        else:
            body = f"{name}s[{kk} * {rows // 4}u + {rq}] = {reg};"
        stores.append(f"        if ({guard}true) {{ {body} }}" if guard else f"        {body}")
    return loads, stores


@kernel
def matmul_vec4(
    bm: int,
    bn: int,
    bk: int,
    tm: int,
    tn: int,
    a_k: bool,
    b_k: bool,
    exact: bool = False,
    epilogue: str | None = None,
) -> str:
    """f32 matmul of contiguous operands with vec4 loads, vec4 shared tiles and vec4 stores.

    Each thread of the (BN/TN) x (BM/TM) workgroup owns TM x TN outputs: TM/4 groups of 4 rows
    (`g * 4 * TY + ty * 4 + r`) by TN/4 groups of 4 columns (`h * 4 * TX + tx * 4 + c`), held
    as TM * TN / 4 vec4 accumulators. Per k step a thread reads TM/4 + TN/4 vec4s from shared
    memory and does TM * TN FMAs. The next tile's global loads are issued before the current
    tile's math, so their latency is hidden.

    `a_k`: A is contiguous along k (row-major), else along m (a transposed view); `b_k`: B is
    contiguous along k (a transposed view), else along n (row-major). The caller guarantees
    16-byte alignment: offsets, batch strides and the leading strides are multiples of 4, and
    so are K, N, and M when A is m-contiguous. Layout `MATMUL`.

    `exact`: M, N and K are multiples of BM, BN and BK, so no load or store is bounds-checked
    (on an H100 this alone took the 128x128 tile from 32 to 39 TFLOP/s at n = 8192). Double
    buffering the shared tiles (one barrier per k step instead of two) was measured there too
    and lost 10-25% to the extra index arithmetic and registers, so it is not offered.
    """
    tx, ty = bn // tn, bm // tm
    nt = tx * ty
    gm_, gn_ = tm // 4, tn // 4
    a_size, b_size = bm * bk // 4, bn * bk // 4
    a_loads, a_stores = _tile_loads("a", bm, bk, nt, a_k, ("a_rs", "a_cs"), "M", exact)
    b_loads, b_stores = _tile_loads("b", bn, bk, nt, b_k, ("b_cs", "b_rs"), "N", exact)
    regs = [f"    var ar{n}: vec4<f32>;" for n in range(-(-a_size // nt))]
    regs += [f"    var br{n}: vec4<f32>;" for n in range(-(-b_size // nt))]
    accs = [
        f"    var acc{g}_{r}_{h} = vec4<f32>(0.0);"
        for g in range(gm_)
        for r in range(4)
        for h in range(gn_)
    ]
    math = []
    for kk in range(bk):
        math.append("        {")
        for g in range(gm_):
            math.append(f"            let a{g} = as_[{kk * bm // 4 + g * ty}u + ty];")
        for h in range(gn_):
            math.append(f"            let b{h} = bs[{kk * bn // 4 + h * tx}u + tx];")
        for g in range(gm_):
            for r, comp in enumerate("xyzw"):
                for h in range(gn_):
                    acc = f"acc{g}_{r}_{h}"
                    math.append(f"            {acc} = fma(vec4<f32>(a{g}.{comp}), b{h}, {acc});")
        math.append("        }")
    stores = []
    for g in range(gm_):
        for r in range(4):
            stores.append(f"    {{\n        let gm = row0 + {g * 4 * ty + r}u + ty * 4u;")
            stores.append("        if (gm < M) {" if not exact else "        {")
            for h in range(gn_):
                col = f"col0 + {h * 4 * tx}u + tx * 4u"
                if epilogue is None:
                    store = f"out[(out_base + gm * N + {col}) / 4u] = acc{g}_{r}_{h};"
                else:
                    store = f"epilogue4(acc{g}_{r}_{h}, out_base + gm * N + {col});"
                stores.append(
                    f"            {store}" if exact else f"            if ({col} < N) {{ {store} }}"
                )
            stores.append("        }\n    }")
    # The loaders name the operands `a`/`b` and their shared tiles `as`/`bs` (`as_`, since
    # `as` is reserved in WGSL).
    a_stores = [line.replace("as[", "as_[") for line in a_stores]
    return (
        header(MATMUL, _bindings("vec4<f32>", epilogue))
        + (epilogue or "")
        + f"""
var<workgroup> as_: array<vec4<f32>, {a_size}>;
var<workgroup> bs: array<vec4<f32>, {b_size}>;
"""
        + _MATMUL_ENTRY.format(tx=tx, ty=ty)
        + _MATMUL_BATCH.format(bm=bm, bm1=bm - 1, bn=bn)
        + "\n".join(regs + accs)
        + "\n    var k0 = 0u;\n    {\n"
        + "\n".join(a_loads + b_loads)
        + """
    }
    loop {
        if (k0 >= K) { break; }
"""
        + "\n".join(a_stores + b_stores)
        + f"""
        workgroupBarrier();
        k0 = k0 + {bk}u;
        if (k0 < K) {{
"""
        + "\n".join("    " + line for line in a_loads + b_loads)
        + """
        }
"""
        + "\n".join(math)
        + """
        workgroupBarrier();
    }
"""
        + "\n".join(stores)
        + "\n}\n"
    )
