"""ImageDecoder (`burn.onnx.runtime.image_decoder`): pixel formats and modes the node suite
leaves out, and bytes that are not an image."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest
from burn.ndarray import NdArray
from burn.onnx import runtime as rt
from burn.onnx.errors import ImageDecodeError
from burn.tensor import Tensor

Image = pytest.importorskip("PIL.Image", reason="ImageDecoder decodes with Pillow")


def _encoded(pixels: np.ndarray, mode: str, fmt: str) -> Tensor:
    buffer = io.BytesIO()
    Image.fromarray(pixels, mode).save(buffer, format=fmt)
    stream = np.frombuffer(buffer.getvalue(), dtype=np.uint8)
    return Tensor.from_data(stream, device=NdArray.device(), dtype="u8")


def _pixels(channels: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    return rng.integers(0, 256, size=(5, 7, channels), dtype=np.uint8)


def test_rgb_bgr_and_grayscale_of_a_png():
    rgb = _pixels(3)
    stream = _encoded(rgb, "RGB", "PNG")
    got = rt.image_decoder(stream).to_data().array
    assert got.dtype == np.uint8 and got.shape == (5, 7, 3)
    np.testing.assert_array_equal(got, rgb)
    np.testing.assert_array_equal(rt.image_decoder(stream, "BGR").to_data().array, rgb[:, :, ::-1])
    gray = rt.image_decoder(stream, "Grayscale").to_data().array
    want = np.asarray(Image.fromarray(rgb, "RGB").convert("L"))[:, :, None]
    np.testing.assert_array_equal(gray, want)


def test_images_of_other_modes_come_out_in_the_asked_format():
    rgba = _pixels(4)
    got = rt.image_decoder(_encoded(rgba, "RGBA", "PNG")).to_data().array
    np.testing.assert_array_equal(got, np.asarray(Image.fromarray(rgba, "RGBA").convert("RGB")))
    gray = _pixels(1)[:, :, 0]
    got = rt.image_decoder(_encoded(gray, "L", "BMP")).to_data().array
    assert got.shape == (5, 7, 3)
    np.testing.assert_array_equal(got, np.repeat(gray[:, :, None], 3, axis=2))


@pytest.mark.parametrize(
    "stream",
    [b"", b"not an image at all", b"\x89PNG\r\n\x1a\n" + b"\x00" * 40],
    ids=["empty", "text", "truncated png"],
)
def test_bytes_that_are_not_an_image_raise_image_decode_error(stream):
    data = np.frombuffer(stream, dtype=np.uint8)
    tensor = Tensor.from_data(data if data.size else np.zeros(0, np.uint8), dtype="u8")
    with pytest.raises(ImageDecodeError, match="ImageDecoder: cannot decode"):
        rt.image_decoder(tensor)


def test_unknown_pixel_format_and_missing_pillow(monkeypatch):
    stream = _encoded(_pixels(3), "RGB", "PNG")
    with pytest.raises(ImageDecodeError, match="pixel_format"):
        rt.image_decoder(stream, "CMYK")
    monkeypatch.setitem(sys.modules, "PIL", None)  # as if Pillow were not installed
    with pytest.raises(ImageDecodeError, match="`images` extra"):
        rt.image_decoder(stream)
