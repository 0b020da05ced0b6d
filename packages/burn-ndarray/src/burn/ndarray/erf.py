"""The error function in numpy, accurate to float64 rounding.

numpy has no `erf`, and pulling in scipy (well over 100 MB installed) for one function would
make the CPU install several times larger than everything else it needs. This uses the rational
Chebyshev approximations published by W. J. Cody ("Rational Chebyshev approximations for the
error function", Mathematics of Computation 23, 1969), which are accurate to a few units in the
last place of a float64 on the three intervals below:

- `|x| <= 0.46875`: `erf(x) = x * R1(x^2)`, computed directly so tiny inputs (and `-0.0`) keep
  their full relative accuracy and sign;
- `0.46875 < |x| <= 4`: `erfc(|x|) = exp(-x^2) * R2(|x|)`;
- `|x| > 4`: `erfc(|x|) = exp(-x^2) / |x| * (1/sqrt(pi) - R3(1/x^2) / x^2)`, which tends to 0
  (beyond `|x|` of about 6, `erf` is 1 to double precision);

and `erf(x) = sign(x) * (1 - erfc(|x|))` outside the first interval. NaN stays NaN and
`erf(+-inf) = +-1`. Every input is computed in float64; callers cast the result back to their
dtype.

The float32 GELU kernels interpolate tables built from this function once
(`burn.ndarray.gelu`).
"""

from __future__ import annotations

import numpy as np

_SMALL = 0.46875
_MEDIUM = 4.0
_CLIP = 30.0
_ONE_OVER_SQRT_PI = 0.56418958354775628695

# Coefficients, highest power first (the order np.polyval takes).
_R1_NUM = (
    1.85777706184603153e-1,
    3.16112374387056560e0,
    1.13864154151050156e2,
    3.77485237685302021e2,
    3.20937758913846947e3,
)
_R1_DEN = (
    1.0,
    2.36012909523441209e1,
    2.44024637934444173e2,
    1.28261652607737228e3,
    2.84423683343917062e3,
)
_R2_NUM = (
    2.15311535474403846e-8,
    5.64188496988670089e-1,
    8.88314979438837594e0,
    6.61191906371416295e1,
    2.98635138197400131e2,
    8.81952221241769090e2,
    1.71204761263407058e3,
    2.05107837782607147e3,
    1.23033935479799725e3,
)
_R2_DEN = (
    1.0,
    1.57449261107098347e1,
    1.17693950891312499e2,
    5.37181101862009858e2,
    1.62138957456669019e3,
    3.29079923573345963e3,
    4.36261909014324716e3,
    3.43936767414372164e3,
    1.23033935480374942e3,
)
_R3_NUM = (
    1.63153871373020978e-2,
    3.05326634961232344e-1,
    3.60344899949804439e-1,
    1.25781726111229246e-1,
    1.60837851487422766e-2,
    6.58749161529837803e-4,
)
_R3_DEN = (
    1.0,
    2.56852019228982242e0,
    1.87295284992346047e0,
    5.27905102951428412e-1,
    6.05183413124413191e-2,
    2.33520497626869185e-3,
)


def _ratio(num: tuple[float, ...], den: tuple[float, ...], t: np.ndarray) -> np.ndarray:
    return np.polyval(num, t) / np.polyval(den, t)


def erf(x: np.ndarray) -> np.ndarray:
    """`erf(x)` elementwise, as a float64 array of `x`'s shape."""
    x = np.asarray(x, dtype=np.float64)
    ax = np.abs(x)
    out = np.full(x.shape, np.nan)

    small = ax <= _SMALL
    xs = x[small]
    out[small] = xs * _ratio(_R1_NUM, _R1_DEN, xs * xs)

    medium = (ax > _SMALL) & (ax <= _MEDIUM)
    am = ax[medium]
    erfc = np.exp(-am * am) * _ratio(_R2_NUM, _R2_DEN, am)
    out[medium] = np.copysign(1.0 - erfc, x[medium])

    large = ax > _MEDIUM
    # erfc(30) is about 1e-393, far below what 1 - erfc can show: clipping there changes no
    # result and keeps x^2 finite for huge and infinite inputs.
    al = np.minimum(ax[large], _CLIP)
    inv_sq = 1.0 / (al * al)
    tail = (_ONE_OVER_SQRT_PI - inv_sq * _ratio(_R3_NUM, _R3_DEN, inv_sq)) / al
    erfc = np.exp(-al * al) * tail
    out[large] = np.copysign(1.0 - erfc, x[large])
    return out
