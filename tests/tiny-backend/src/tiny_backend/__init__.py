"""tiny_backend: a third-party burn backend that implements only the contract's required core.

```python
from burn.backend import Tiny
device = Tiny.device()
```
"""

from tiny_backend.backend import Tiny, TinyBackend, TinyDevice, TinyTensor

__all__ = ["Tiny", "TinyBackend", "TinyDevice", "TinyTensor"]
