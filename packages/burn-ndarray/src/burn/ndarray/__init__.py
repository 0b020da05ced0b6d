"""burn-ndarray: the NdArray CPU backend, on numpy.

```python
from burn.backend import NdArray
device = NdArray.device()
```

Importing it sets numpy's BLAS to half the usable cores unless `OPENBLAS_NUM_THREADS`,
`OMP_NUM_THREADS` or `MKL_NUM_THREADS` is set (see `burn.ndarray.threads` for why).
"""

from burn.ndarray.threads import configure_blas_threads

configure_blas_threads()

from burn.ndarray.backend import NdArray, NdArrayBackend  # noqa: E402
from burn.ndarray.device import NdArrayDevice  # noqa: E402

__all__ = ["NdArray", "NdArrayBackend", "NdArrayDevice"]
