"""The module system with a small Linear-like module written here (burn.nn comes later)."""

from __future__ import annotations

import numpy as np
import pytest
from burn.backend import Autodiff, NdArray
from burn.module import Module, ModuleMapper, ModuleVisitor, Param, ParamId
from burn.record import (
    BinBytesRecorder,
    BinFileRecorder,
    BinGzFileRecorder,
    CompactRecorder,
    DoublePrecisionSettings,
    FullPrecisionSettings,
    HalfPrecisionSettings,
    JsonGzFileRecorder,
    NamedMpkBytesRecorder,
    NamedMpkFileRecorder,
    NamedMpkGzFileRecorder,
    ParamRecord,
    PrettyJsonFileRecorder,
    RecordError,
    SensitiveCompactRecorder,
    Some,
)
from burn.tensor import BackendError, BurnError, DType, Int, Tensor


class Linear(Module):
    weight: Param
    bias: Param | None

    def __init__(self, d_in: int, d_out: int, device, bias: bool = True, seed: int = 0):
        rng = np.random.default_rng(seed)
        w = rng.standard_normal((d_in, d_out)).astype(np.float32)
        self.weight = Param(Tensor.from_data(w, device))
        self.bias = (
            Param(Tensor.from_data(rng.standard_normal(d_out).astype(np.float32), device))
            if bias
            else None
        )
        self.d_in = d_in  # a constant

    def forward(self, x: Tensor) -> Tensor:
        y = x.matmul(self.weight.val())
        return y + self.bias.val().unsqueeze() if self.bias is not None else y


class Dropout(Module):
    """No parameter below: a constant module, recorded as none (as Burn's Dropout)."""

    def __init__(self, prob: float):
        self.prob = prob


class Block(Module):
    def __init__(self, d: int, device, seed: int):
        self.linear = Linear(d, d, device, seed=seed)
        self.dropout = Dropout(0.1)


class Encoder(Module):
    def __init__(self, device, n: int = 4, d: int = 3):
        self.layers = [Block(d, device, seed=i) for i in range(n)]
        self.heads = {
            "a": Linear(d, 2, device, seed=10),
            "b": Linear(d, 1, device, bias=False, seed=11),
        }
        self.pair = (Linear(d, d, device, seed=12), None)
        self.scale = Tensor.ones([d], device)  # a plain tensor: a constant, not recorded
        self.steps = Param(Tensor[None, 1, Int].from_data([1, 2, 3], device))
        self._cache = "private"

    def forward(self, x: Tensor) -> Tensor:
        for block in self.layers:
            x = block.linear.forward(x)
        return self.heads["a"].forward(x)


def test_discovers_params_in_lists_dicts_tuples_and_optional_fields():
    model = Encoder(NdArray.device())
    names = [name for name, _ in model.named_params()]
    assert names == [
        "layers.0.linear.weight",
        "layers.0.linear.bias",
        "layers.1.linear.weight",
        "layers.1.linear.bias",
        "layers.2.linear.weight",
        "layers.2.linear.bias",
        "layers.3.linear.weight",
        "layers.3.linear.bias",
        "heads.a.weight",
        "heads.a.bias",
        "heads.b.weight",
        "pair.0.weight",
        "pair.0.bias",
        "steps",
    ]
    assert model.num_params() == 4 * 12 + 8 + 3 + 12 + 3
    assert model.devices() == [NdArray.device()]


def test_record_structure_constants_are_none_and_tensors_not_recorded():
    record = Encoder(NdArray.device()).into_record()
    assert list(record) == ["layers", "heads", "pair", "scale", "steps"]
    assert record["scale"] is None
    block = record["layers"][0]
    assert block["dropout"] is None
    assert block["linear"]["d_in"] is None
    assert isinstance(block["linear"]["weight"], ParamRecord)
    assert isinstance(block["linear"]["bias"], Some)  # annotated `Param | None`
    assert record["heads"]["b"]["bias"] is None
    assert isinstance(record["pair"], tuple) and record["pair"][1] is None
    assert record["steps"].data.dtype is DType.I64


def test_load_record_round_trip_keeps_ids_and_values():
    device = NdArray.device()
    a, b = Encoder(device), Encoder(device)
    b = b.map(lambda pid, t: t.zeros_like())
    loaded = b.load_record(a.into_record())
    for (name, pa), (_, pl) in zip(a.named_params(), loaded.named_params(), strict=True):
        assert pa.id == pl.id, name
        pa.val().to_data().assert_eq(pl.val().to_data())
    assert b.layers[0].linear.weight.val().to_data().array.sum() == 0  # b itself unchanged


def test_wrong_shape_names_the_path():
    device = NdArray.device()
    record = Encoder(device).into_record()
    record["layers"][3]["linear"]["weight"] = ParamRecord(
        "x", Tensor.zeros([3, 4], device).to_data()
    )
    with pytest.raises(
        RecordError, match=r"^layers\.3\.linear\.weight: expected \[3, 3\], got \[3, 4\]$"
    ):
        Encoder(device).load_record(record)


def test_missing_key_and_extra_key():
    device = NdArray.device()
    record = Encoder(device).into_record()
    del record["heads"]["a"]["weight"]
    with pytest.raises(RecordError, match=r"heads\.a: the record has no 'weight'"):
        Encoder(device).load_record(record)
    record = Encoder(device).into_record()
    record["layers"][0]["linear"]["extra"] = None
    with pytest.raises(
        RecordError, match=r"1 entry the module does not use: layers\.0\.linear\.extra \("
    ):
        Encoder(device).load_record(record)
    Encoder(device).load_record(record, strict=False)


def test_strict_reports_every_entry_the_module_does_not_consume():
    from burn.nn import LinearConfig

    device = NdArray.device()
    with_bias = LinearConfig(3, 2).init(device).into_record()
    no_bias = LinearConfig(3, 2, bias=False).init(device)
    with pytest.raises(RecordError, match=r"1 entry the module does not use: bias \("):
        no_bias.load_record(with_bias)
    loaded = no_bias.load_record(with_bias, strict=False)
    assert loaded.bias is None
    record = Encoder(device).into_record()
    record["layers"][0]["linear"]["extra"] = 1
    record["layers"][2]["linear"]["more"] = {"w": with_bias["weight"]}
    record["unknown"] = []
    with pytest.raises(RecordError, match="3 entries the module does not use") as caught:
        Encoder(device).load_record(record)
    for path in ("unknown", "layers.0.linear.extra", "layers.2.linear.more"):
        assert path in str(caught.value)


def test_wrong_length_and_kind():
    device = NdArray.device()
    record = Encoder(device).into_record()
    record["layers"] = record["layers"][:3]
    with pytest.raises(RecordError, match="layers: expected 4 items, the record has 3"):
        Encoder(device).load_record(record)
    record = Encoder(device).into_record()
    record["heads"]["a"]["weight"] = {"not": "a param"}
    with pytest.raises(RecordError, match=r"heads\.a\.weight: expected a parameter"):
        Encoder(device).load_record(record)


def test_visit_and_map():
    model = Encoder(NdArray.device())

    class Count(ModuleVisitor):
        def __init__(self):
            self.floats, self.ints = 0, 0

        def visit_float(self, id, tensor):  # noqa: A002
            self.floats += tensor.num_elements()

        def visit_int(self, id, tensor):  # noqa: A002
            self.ints += tensor.num_elements()

    count = Count()
    model.visit(count)
    assert count.floats == model.num_params() - 3 and count.ints == 3

    class Double(ModuleMapper):
        def map_float(self, id, tensor):  # noqa: A002
            return tensor * 2

    doubled = model.map(Double())
    w0 = model.layers[0].linear.weight
    w1 = doubled.layers[0].linear.weight
    assert w0.id == w1.id
    np.testing.assert_allclose(w1.val().to_data().array, 2 * w0.val().to_data().array)
    assert doubled.steps.val().to_data().to_vec() == [1, 2, 3]
    seen = []
    model.visit(lambda pid, t: seen.append(pid))
    assert seen == [p.id for p in model.params()]


def test_autodiff_params_are_tracked_leaves_and_keep_ids_after_a_step():
    B = Autodiff(NdArray)
    model = Encoder(B.device())
    assert all(p.val().is_require_grad() for p in model.params() if p.dtype.is_float)
    x = Tensor.from_data(np.ones((2, 3), np.float32), B.device())
    grads = model.forward(x).sum().backward()
    grad = model.layers[0].linear.weight.grad(grads)
    assert grad is not None and grad.dims() == [3, 3] and grad.backend is NdArray

    def sgd(pid, tensor):
        g = tensor.grad(grads)
        if g is None:
            return tensor
        return Tensor.from_inner(tensor.inner() - g * 0.1, B)

    stepped = model.map(sgd)
    assert [p.id for p in stepped.params()] == [p.id for p in model.params()]
    assert stepped.layers[0].linear.weight.val().is_require_grad()
    # the stepped module trains again
    grads = stepped.forward(x).sum().backward()
    assert stepped.layers[0].linear.weight.grad(grads) is not None


def test_no_grad_freezes_params():
    B = Autodiff(NdArray)
    frozen = Encoder(B.device()).no_grad()
    assert not any(p.val().is_require_grad() for p in frozen.params())
    assert not any(p.is_require_grad() for p in frozen.params())


def test_valid_moves_to_the_inner_backend():
    B = Autodiff(NdArray)
    model = Encoder(B.device())
    valid = model.valid()
    assert all(p.val().backend is NdArray for p in valid.params())
    assert [p.id for p in valid.params()] == [p.id for p in model.params()]
    assert model.layers[0].linear.weight.val().backend is B
    with pytest.raises(BackendError, match="valid"):
        valid.valid()


def test_fork_and_to_device_keep_ids():
    B = Autodiff(NdArray)
    model = Encoder(B.device())
    for moved in (model.fork(B.device()), model.to_device(B.device())):
        assert [p.id for p in moved.params()] == [p.id for p in model.params()]
        assert moved.devices() == [B.device()]
        assert moved.layers[0].linear.weight.val().is_require_grad()


ALL_FILE_RECORDERS = [
    NamedMpkFileRecorder(FullPrecisionSettings),
    NamedMpkFileRecorder(DoublePrecisionSettings),
    NamedMpkGzFileRecorder(HalfPrecisionSettings),
    BinFileRecorder(FullPrecisionSettings),
    BinGzFileRecorder(DoublePrecisionSettings),
    PrettyJsonFileRecorder(FullPrecisionSettings),
    JsonGzFileRecorder(HalfPrecisionSettings),
    CompactRecorder(),
    SensitiveCompactRecorder(),
]


@pytest.mark.parametrize("recorder", ALL_FILE_RECORDERS, ids=repr)
def test_saved_from_autodiff_loads_into_ndarray(tmp_path, recorder):
    source = Encoder(Autodiff(NdArray).device()).map(lambda pid, t: t * 3)
    path = source.save_file(tmp_path / "model", recorder)
    assert path.exists() and path.name.startswith("model.")
    target = Encoder(NdArray.device(), d=3)
    loaded = target.load_file(tmp_path / "model", recorder, NdArray.device())
    half = recorder.settings is HalfPrecisionSettings
    for (name, ps), (_, pl) in zip(source.named_params(), loaded.named_params(), strict=True):
        assert ps.id == pl.id
        assert pl.val().backend is NdArray
        assert pl.dtype is ps.dtype, name  # converted back to the module's dtype
        if half and ps.dtype.is_float:
            ps.val().inner().to_data().assert_approx_eq(pl.val().to_data(), tolerance=1e-2)
        else:
            ps.val().inner().to_data().assert_eq(pl.val().to_data())


@pytest.mark.parametrize("recorder", [NamedMpkBytesRecorder(), BinBytesRecorder()], ids=repr)
def test_bytes_recorders_with_modules(recorder):
    model = Encoder(NdArray.device())
    raw = recorder.record(model.into_record())
    loaded = Encoder(NdArray.device()).load_record(recorder.load(raw, model.record_schema()))
    model.heads["a"].weight.val().to_data().assert_eq(loaded.heads["a"].weight.val().to_data())


def test_load_file_errors_name_the_file_and_path(tmp_path):
    device = NdArray.device()
    Encoder(device, d=3).save_file(tmp_path / "m", NamedMpkFileRecorder())
    with pytest.raises(
        RecordError, match=r"m\.mpk: layers\.0\.linear\.weight: expected \[4, 4\], got \[3, 3\]"
    ):
        Encoder(device, d=4).load_file(tmp_path / "m", NamedMpkFileRecorder())
    with pytest.raises(BurnError):
        Encoder(device, n=2).load_file(tmp_path / "m", NamedMpkFileRecorder())


def test_param_id_text_form_is_burns():
    pid = ParamId(123456)
    text = pid.serialize()
    assert len(text) == 13 and text == text.lower()
    assert ParamId.deserialize(text) == pid
    # Burn's own example: 8 little-endian bytes in base32hex ('lrfckrk4a5oj6' from a Rust record)
    assert ParamId.deserialize("lrfckrk4a5oj6").serialize() == "lrfckrk4a5oj6"
    legacy = ParamId.deserialize("30b82c23-788d-4d63-a743-ada258d5f13c")
    assert legacy == ParamId.deserialize("30b82c23-788d-4d63-a743-ada258d5f13c")
    with pytest.raises(ValueError):
        ParamId.deserialize("not an id!")


def test_repr_lists_fields():
    text = repr(Linear(2, 3, NdArray.device()))
    assert text.startswith("Linear {") and "weight: Param(" in text and "params: 9" in text


def _installed_backends():
    """Every installed backend, plain and under Autodiff: the records' conformance matrix."""
    from burn.backend import backends

    found = []
    for name, backend in sorted(backends().items()):
        if backend.unavailable_reason():
            continue  # e.g. Wgpu on a machine without an adapter
        found += [
            pytest.param(backend, id=name),
            pytest.param(Autodiff(backend), id=f"{name}+Autodiff"),
        ]
    return found


@pytest.mark.parametrize("recorder", ALL_FILE_RECORDERS, ids=repr)
@pytest.mark.parametrize("backend", _installed_backends())
def test_records_round_trip_on_every_backend(tmp_path, backend, recorder):
    """Saved on any backend, a record loads back there and into NdArray with the same values."""
    source = Encoder(backend.device()).map(lambda pid, t: t * 3)
    source.save_file(tmp_path / "model", recorder)
    half = recorder.settings is HalfPrecisionSettings
    for target_backend in (backend, NdArray):
        loaded = Encoder(target_backend.device()).load_file(
            tmp_path / "model", recorder, target_backend.device()
        )
        pairs = zip(source.named_params(), loaded.named_params(), strict=True)
        for (name, ps), (_, pl) in pairs:
            assert ps.id == pl.id, name
            assert pl.val().backend is target_backend, name
            want, got = ps.val().inner().to_data(), pl.val().inner().to_data()
            if half and ps.dtype.is_float:
                want.assert_approx_eq(got, tolerance=1e-2)
            else:
                want.assert_eq(got, strict=False)


def test_mapped_modules_are_shallow_copies_that_honour_a_class_own_copy_protocol():
    """`map` copies each module (a new instance with the same constants and private fields);
    a module class with its own `__copy__`, state hook or slots is copied as `copy.copy`
    copies it, not by the direct route plain classes take."""

    class Identity(ModuleMapper):
        def map_float(self, id, tensor):  # noqa: A002
            return tensor

    model = Encoder(NdArray.device())
    mapped = model.map(Identity())
    assert type(mapped) is Encoder and mapped is not model
    assert mapped._cache == "private" and mapped.scale is model.scale
    assert mapped.layers[0] is not model.layers[0] and mapped.layers[0].dropout.prob == 0.1

    copies = []

    class Counted(Linear):
        def __copy__(self):
            copies.append(self)
            new = Counted.__new__(Counted)
            new.__dict__.update(self.__dict__)
            new.copied = True
            return new

    class Stateful(Linear):
        def __getstate__(self):
            return {**self.__dict__, "restored": True}

    class Slotted(Linear):
        __slots__ = ("tag",)

    device = NdArray.device()
    counted = Counted(2, 2, device)
    assert counted.map(Identity()).copied and copies == [counted]
    assert Stateful(2, 2, device).map(Identity()).restored
    slotted = Slotted(2, 2, device)
    slotted.tag = "kept"
    assert slotted.map(Identity()).tag == "kept"
