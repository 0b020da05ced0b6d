"""burn-ndarray: the NdArray CPU backend, on numpy.

```python
from burn.backend import NdArray
device = NdArray.device()
```
"""

from burn.ndarray.backend import NdArray, NdArrayBackend
from burn.ndarray.device import NdArrayDevice

__all__ = ["NdArray", "NdArrayBackend", "NdArrayDevice"]
