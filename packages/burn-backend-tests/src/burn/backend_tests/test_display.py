"""repr / str of a tensor: Burn's Display layout (data, shape, device, backend, kind, dtype)."""

from burn.backend_tests.helpers import tensor


def test_display_2d_float(backend):
    t = tensor(backend, [[1.0, 2.0], [3.0, 4.5]])
    text = repr(t)
    assert str(t) == text
    assert text.startswith("Tensor {") and text.rstrip().endswith("}")
    assert "[[1.0, 2.0]," in text and "[3.0, 4.5]]" in text
    assert "shape:  [2, 2]" in text
    assert f'backend:  "{backend.name}"' in text
    assert 'kind:  "Float"' in text
    assert f'dtype:  "{t.dtype.value}"' in text
    assert f"device:  {t.device()!r}" in text


def test_display_int_bool(backend):
    assert "[1, -2, 3]" in repr(tensor(backend, [1, -2, 3]))
    text = repr(tensor(backend, [True, False]))
    assert "[true, false]" in text and 'kind:  "Bool"' in text


def test_display_f32_precision_and_large(backend):
    text = repr(tensor(backend, [1 / 3]))
    assert "0.33333334" in text or "0.3333333" in text
    big = repr(tensor(backend, list(range(2000))))
    assert "..." in big and "shape:  [2000]" in big


def test_display_empty(backend):
    assert "shape:  [0, 3]" in repr(tensor(backend, [[]] * 0 or [[0.0] * 3][:0]).reshape([0, 3]))
