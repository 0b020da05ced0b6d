"""The custom-kernel API: your own WGSL compute shader, launched on `Wgpu` tensors.

A kernel is a WGSL *template* with placeholders written `{{ name }}`; `{{ elem }}` (the WGSL
element type), `{{ workgroup_size_x }}`, `{{ workgroup_size_y }}` and `{{ workgroup_size_z }}`
are always defined, and any other name can be given as a keyword. The rendered source is the
pipeline cache key, so a kernel compiles once per element type and workgroup size.

Bindings follow one convention: the input tensors in order, then the outputs, then one
read-only `array<u32>` named `info` holding the *info* words (usually `build_info(...)`: the
rank, then the strides and shape of each tensor). Give the kernel an `InfoLayout` of those
words (`info_layout(...)` declares `build_info`'s) and its source gets accessor functions
that read them by name, such as `info_rank()` and `info_x_shape(d)`:

```python
from burn.tensor import Tensor
from burn.wgpu import (
    KernelSource, Wgpu, WorkGroup, build_info, empty, info_layout, into_contiguous, launch,
)

DOUBLE = '''
@group(0) @binding(0) var<storage, read> input: array<{{ elem }}>;
@group(0) @binding(1) var<storage, read_write> output: array<{{ elem }}>;
@group(0) @binding(2) var<storage, read> info: array<u32>;

@compute @workgroup_size({{ workgroup_size_x }}, 1, 1)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < info_output_shape(0u)) {
        output[id.x] = input[id.x] * 2.0;
    }
}
'''

x = into_contiguous(Tensor[Wgpu, 1].from_data([1.0, 2.0, 3.0], Wgpu.device()))
layout = info_layout("input", "output")
kernel = KernelSource(DOUBLE, elem=x.dtype, workgroup_size=(64, 1), info=layout)
out = empty(x.dims(), x.device(), x.dtype)
launch(kernel, inputs=[x], outputs=[out], info=build_info(x, out), workgroups=WorkGroup(1))
assert out.to_data().to_list() == [2.0, 4.0, 6.0]
```

Launches are recorded like every other kernel: nothing waits for the GPU until data is read.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from burn.tensor import DType, Tensor
from burn.tensor.errors import BackendError
from burn.tensor.kind import kind_of_dtype
from burn.wgpu import kernels as K
from burn.wgpu.backend import Wgpu
from burn.wgpu.kernels.layout import Dims, InfoLayout, Word
from burn.wgpu.primitive import WgpuTensor, row_major

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


@dataclass(frozen=True)
class WorkGroup:
    """How many workgroups a launch runs, per dimension."""

    x: int
    y: int = 1
    z: int = 1

    def num_invocations(self, size: tuple[int, int, int]) -> int:
        return self.x * self.y * self.z * size[0] * size[1] * size[2]


class KernelSource:
    """A WGSL template plus the values of its placeholders.

    Args:
        template: WGSL source with `{{ name }}` placeholders.
        elem: the element type (`DType.F32`, `DType.F16`, `DType.I32`) behind `{{ elem }}`.
        workgroup_size: up to three sizes behind `{{ workgroup_size_x/y/z }}`.
        info: the layout of the info words; its accessor functions (`info_<field>()`, ...)
            are added to the source, after the template.
        **values: any further placeholder values.
    """

    def __init__(
        self,
        template: str,
        elem: DType = DType.F32,
        workgroup_size=(16, 16, 1),
        info: InfoLayout | None = None,
        **values,
    ):
        size = tuple(workgroup_size) + (1, 1, 1)
        self.template = template
        self.elem = elem
        self.info = info
        self.workgroup_size = (int(size[0]), int(size[1]), int(size[2]))
        self.values = {
            "elem": K.store(elem),
            "workgroup_size_x": self.workgroup_size[0],
            "workgroup_size_y": self.workgroup_size[1],
            "workgroup_size_z": self.workgroup_size[2],
            **values,
        }

    def source(self) -> str:
        """The rendered WGSL (with `enable f16;` first when the element type needs it, and the
        info layout's accessors last)."""

        def fill(match: re.Match) -> str:
            name = match.group(1)
            if name not in self.values:
                raise BackendError(f"kernel template: no value for placeholder {{{{ {name} }}}}")
            return str(self.values[name])

        body = _PLACEHOLDER.sub(fill, self.template)
        accessors = "" if self.info is None else "\n" + self.info.wgsl()
        return ("enable f16;\n" if self.elem is DType.F16 else "") + body + accessors

    @property
    def id(self) -> str:
        """A stable identifier: the kind of kernel plus a hash of its rendered source."""
        digest = hashlib.sha1(self.source().encode()).hexdigest()[:16]
        return f"{type(self).__name__}-{digest}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id!r})"


def _wgpu_primitive(t: Tensor, what: str) -> WgpuTensor:
    p = t.primitive
    if not isinstance(p, WgpuTensor):
        raise BackendError(
            f"custom kernel: {what} must be a Wgpu tensor (got one of {t.backend!r}); "
            "on Autodiff(Wgpu) call kernels inside a CustomOp's forward"
        )
    return p


def into_contiguous(t: Tensor) -> Tensor:
    """`t` laid out row-major from the start of its buffer, as custom kernels expect.

    A tensor that already is comes back as is; a view (transposed, sliced, expanded) is copied.
    """
    p = _wgpu_primitive(t, "the input")
    if p.is_contiguous() and p.offset == 0:
        return t
    return Tensor._make(Wgpu, Wgpu._copy(p, p.dtype), t.kind)


def empty(shape, device=None, dtype: DType = DType.F32) -> Tensor:
    """An uninitialised contiguous tensor for a kernel to write (its values are undefined)."""
    device = device or Wgpu.device()
    Wgpu._check_dtype(dtype)
    p = Wgpu._empty(tuple(int(n) for n in shape), dtype, device, Wgpu.runtime(device))
    return Tensor._make(Wgpu, p, kind_of_dtype(dtype))


def build_info(*tensors: Tensor) -> list[int]:
    """Info words `[rank, strides of t0..., shape of t0..., strides of t1..., ...]`.

    All tensors must have the same rank (broadcast dims have size 1 in the shape).
    """
    prims = [_wgpu_primitive(t, "every tensor") for t in tensors]
    ranks = {len(p.shape) for p in prims}
    if len(ranks) != 1:
        raise BackendError(f"build_info: tensors of different ranks {sorted(ranks)}")
    info = [ranks.pop()]
    for p in prims:
        info += [*p.strides, *p.shape]
    return info


def info_layout(*names: str) -> InfoLayout:
    """The layout of the words `build_info` writes for tensors called `names` (in order): the
    `rank` word, then `<name>_strides` and `<name>_shape` per tensor, so a kernel reads
    `info_rank()`, `info_lhs_strides(d)`, `info_output_shape(d)`, ...
    """
    fields: list[Word | Dims] = [Word("rank")]
    for name in names:
        fields += [Dims(f"{name}_strides"), Dims(f"{name}_shape")]
    return InfoLayout(f"build_info({', '.join(names)})", *fields)


def launch(
    kernel: KernelSource,
    inputs: list[Tensor],
    outputs: list[Tensor],
    info: list[int],
    workgroups: WorkGroup,
) -> None:
    """Record one dispatch of `kernel`: bindings are inputs, outputs, then the info words.

    Inputs are read through their buffers as they are: pass contiguous ones (`into_contiguous`)
    unless the kernel reads strides and offsets itself. Outputs should come from `empty`.
    """
    prims_in = [_wgpu_primitive(t, "an input") for t in inputs]
    prims_out = [_wgpu_primitive(t, "an output") for t in outputs]
    prims = prims_in + prims_out
    if not prims:
        raise BackendError("launch: a kernel needs at least one tensor")
    rt = prims[0].rt
    if any(p.rt is not rt for p in prims):
        raise BackendError("launch: tensors live on different wgpu devices")
    for p in prims_out:
        if p.offset != 0 or p.strides != row_major(p.shape):
            raise BackendError("launch: outputs must be contiguous tensors from `empty`")
    access = ("r",) * len(prims_in) + ("rw",) * len(prims_out)
    groups = (workgroups.x, workgroups.y, workgroups.z)
    rt.launch(
        kernel.source(), access, [p.handle for p in prims], list(info), groups, info_last=True
    )
    for p in prims_out:
        p.host = None
