"""ImageDecoder: an encoded image (the bytes of a JPEG, PNG, BMP, TIFF, WebP, PNM or JPEG 2000
file, as a uint8 tensor) decoded on the host by Pillow into `[height, width, channels]` uint8.

Decoding is a file format's job, so it goes to the library every Python image stack uses
(burn-import's `images` extra), imported on first use so that models without this op
need no Pillow. The bytes are data: a stream Pillow cannot read, or one whose pixel count
trips Pillow's decompression-bomb guard, raises `ImageDecodeError`.
"""

from __future__ import annotations

import io

import numpy as np
from burn.onnx.errors import ImageDecodeError
from burn.onnx.runtime.shape import fit
from burn.tensor import Tensor

__all__ = ["image_decoder"]

# Pillow's mode for each ONNX pixel format, and whether the channels come out reversed.
_FORMATS = {"RGB": ("RGB", False), "BGR": ("RGB", True), "Grayscale": ("L", False)}


def image_decoder(encoded_stream: Tensor, pixel_format: str = "RGB") -> Tensor:
    """`[H, W, 3]` (RGB or BGR) or `[H, W, 1]` (Grayscale) uint8 pixels of the image whose
    encoded bytes `encoded_stream` holds."""
    if pixel_format not in _FORMATS:
        raise ImageDecodeError(
            f"ImageDecoder: pixel_format must be one of {sorted(_FORMATS)}, got {pixel_format!r}"
        )
    try:
        from PIL import Image
    except ImportError:
        raise ImageDecodeError(
            "ImageDecoder needs Pillow (burn-import's `images` extra): pip install pillow"
        ) from None
    data = np.asarray(encoded_stream.to_data().array).astype(np.uint8, copy=False).tobytes()
    mode, reverse = _FORMATS[pixel_format]
    try:
        with Image.open(io.BytesIO(data)) as img:
            pixels = np.asarray(img.convert(mode), dtype=np.uint8)
    except (OSError, ValueError, Image.DecompressionBombError) as e:
        raise ImageDecodeError(
            f"ImageDecoder: cannot decode the {len(data)}-byte stream: {e}"
        ) from None
    if pixels.ndim == 2:
        pixels = pixels[:, :, None]
    if reverse:
        pixels = pixels[:, :, ::-1]
    device = encoded_stream.device()
    return Tensor.from_data(np.ascontiguousarray(pixels), device=device, dtype=fit("u8", device))
