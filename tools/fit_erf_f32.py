"""Fit the float32 error function of `burn.ndarray.erf.erf_f32` and report its accuracy.

erf(x) ~ x * P(x^2) / Q(x^2) on [0, 3.925] (beyond, erf rounds to 1 in float32), P and Q of
degree 5, Q(0) = 1. The fit is linear least squares on the relative error at Chebyshev nodes,
reweighted towards the largest errors (Lawson's iteration), in a scaled variable so the normal
equations stay well conditioned; the reference is the float64 `erf` of `burn.ndarray.erf`.

    uv run python tools/fit_erf_f32.py
"""

from __future__ import annotations

import numpy as np
from burn.ndarray.erf import erf, erf_f32

CLIP = 3.925
DEGREE = 5


def fit(iterations: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """(P, Q) coefficients, lowest power of x^2 first."""
    x = np.cos(np.linspace(0.0, np.pi, 6000)) * CLIP / 2 + CLIP / 2
    x = x[x > 1e-6]
    t = (x / CLIP) ** 2
    y = erf(x)
    powers = np.arange(DEGREE + 1)
    weight = np.ones_like(x)
    for _ in range(iterations):
        # x P(t) - y (Q(t) - 1) = y, divided by y: the relative error, linear in P and Q.
        a = np.concatenate(
            [x[:, None] * t[:, None] ** powers, -y[:, None] * t[:, None] ** powers[1:]], 1
        )
        c, *_ = np.linalg.lstsq(a / y[:, None] * weight[:, None], weight, rcond=None)
        p, q = c[: DEGREE + 1], np.concatenate([[1.0], c[DEGREE + 1 :]])
        approx = x * np.polyval(p[::-1], t) / np.polyval(q[::-1], t)
        error = np.abs(approx / y - 1)
        weight = weight * (error / error.max()) ** 0.5 + 1e-6
        weight /= weight.max()
    scale = CLIP ** (-2.0 * powers)
    return p * scale, q * scale


def main() -> None:
    p, q = fit()
    print("numerator, highest power first:", [float(c) for c in p[::-1]])
    print("denominator, highest power first:", [float(c) for c in q[::-1]])
    xs = np.concatenate([np.linspace(-6, 6, 2_000_001), np.geomspace(1e-30, 6, 100_000)])
    xs = xs.astype(np.float32)
    error = np.abs(erf_f32(xs).astype(np.float64) - erf(xs.astype(np.float64)))
    print(f"erf_f32 as shipped: max absolute error {error.max():.2e}")


if __name__ == "__main__":
    main()
