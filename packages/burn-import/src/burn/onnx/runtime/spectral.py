"""DFT as products with cosine and sine matrices built on the host (so gradients flow): forward
and inverse, full or one-sided (real input's half spectrum, and its inverse)."""

from __future__ import annotations

import numpy as np
from burn.onnx.runtime.nn import matmul
from burn.onnx.runtime.shape import as_scalar, fit
from burn.tensor import Tensor

__all__ = ["dft", "mel_weight_matrix", "stft"]


def _fit_length(t: Tensor, n: int) -> Tensor:
    """Zero-pad or truncate the last dim to `n` (as numpy's fft does)."""
    size = t.dims()[-1]
    if size > n:
        return t.narrow(t.rank() - 1, 0, n)
    if size < n:
        return t.pad([0, n - size], 0.0)
    return t


def _matrix(values: np.ndarray, like: Tensor) -> Tensor:
    return Tensor.from_data(values, device=like.device(), dtype=like.dtype)


def dft(x: Tensor, dft_length=None, axis=None, inverse: int = 0, onesided: int = 0, opset_axis=1):
    rank = x.rank()
    dtype = x.dtype
    wide = fit("f64", x.device())  # sums of many products: accumulate wide where possible
    x = x.cast(wide) if x.dtype.value != wide else x
    axis = int(as_scalar(axis)) if axis is not None else opset_axis
    axis %= rank
    moved = x.swap_dims(axis, rank - 2) if axis != rank - 2 else x
    complex_input = moved.dims()[-1] == 2
    real = moved.narrow(rank - 1, 0, 1).reshape(moved.dims()[:-1])
    imag = moved.narrow(rank - 1, 1, 1).reshape(moved.dims()[:-1]) if complex_input else None
    length = real.dims()[-1]
    if dft_length is not None:
        n = int(as_scalar(dft_length))
    else:
        n = 2 * (length - 1) if inverse and onesided else length
    if inverse and onesided:
        bins = n // 2 + 1
        real = _fit_length(real, bins)
        imag = _fit_length(imag, bins) if imag is not None else None
        k = np.arange(bins)[:, None]
        m = np.arange(n)[None, :]
        weight = np.where((k == 0) | ((n % 2 == 0) & (k == n // 2)), 1.0, 2.0) / n
        angle = 2 * np.pi * k * m / n
        out = matmul(real, _matrix(weight * np.cos(angle), real))
        if imag is not None:
            out = out - matmul(imag, _matrix(weight * np.sin(angle), real))
        result = out.unsqueeze_dim(out.rank())
    else:
        real = _fit_length(real, n)
        imag = _fit_length(imag, n) if imag is not None else None
        bins = n // 2 + 1 if onesided else n
        m = np.arange(n)[:, None]
        k = np.arange(bins)[None, :]
        angle = 2 * np.pi * m * k / n
        cos, sin = _matrix(np.cos(angle), real), _matrix(np.sin(angle), real)
        sign = 1.0 if inverse else -1.0
        out_real = matmul(real, cos)
        out_imag = matmul(real, sin) * sign
        if imag is not None:
            out_real = out_real - matmul(imag, sin) * sign
            out_imag = out_imag + matmul(imag, cos)
        if inverse:
            out_real, out_imag = out_real / n, out_imag / n
        result = Tensor.stack([out_real, out_imag], out_real.rank())
    result = result.cast(dtype) if result.dtype != dtype else result
    return result.swap_dims(axis, rank - 2) if axis != rank - 2 else result


def stft(signal: Tensor, frame_step, window: Tensor | None = None, frame_length=None, onesided=1):
    """Frames of `signal` [batch, length, 1 or 2], windowed, each transformed by `dft`:
    [batch, frames, bins, 2]."""
    step = int(as_scalar(frame_step))
    if frame_length is not None:
        length = int(as_scalar(frame_length))
    else:
        length = window.dims()[0]
    total = signal.dims()[1]
    count = 1 + (total - length) // step
    frames = Tensor.stack([signal.narrow(1, f * step, length) for f in range(count)], 1)
    if window is not None:
        frames = frames * window.cast(frames.dtype).reshape([1, 1, length, 1])
    return dft(frames, None, 2, 0, onesided)


def mel_weight_matrix(num_mel_bins, dft_length, sample_rate, lower_edge, upper_edge, dtype="f32"):
    """Triangular filters from linear frequency bins to mel bins, [dft_length // 2 + 1, mels]."""
    mels, n, rate = (int(as_scalar(v)) for v in (num_mel_bins, dft_length, sample_rate))
    low, high = float(as_scalar(lower_edge)), float(as_scalar(upper_edge))
    to_mel = lambda hz: 2595 * np.log1p(hz / 700) / np.log(10)  # noqa: E731
    points = np.arange(mels + 2)
    step = (to_mel(high) - to_mel(low)) / points.shape[0]
    hz = 700 * np.expm1((points * step + to_mel(low)) / 2595 * np.log(10))
    bins = (((n + 1) * hz) // rate).astype(int)
    out = np.zeros((n // 2 + 1, mels))
    for i in range(mels):
        left, center, right = bins[i], bins[i + 1], bins[i + 2]
        if center == left:
            out[center, i] = 1
        else:
            for j in range(left, center + 1):
                out[j, i] = (j - left) / (center - left)
        for j in range(center, right):
            out[j, i] = (right - j) / (right - center)
    device = num_mel_bins.device() if isinstance(num_mel_bins, Tensor) else None
    return Tensor.from_data(out, device=device, dtype=fit(dtype, device))
