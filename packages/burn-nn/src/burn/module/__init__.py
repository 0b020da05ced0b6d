"""burn.module: the module system (parameters, submodules, records), as Burn's `Module` trait.

```python
from burn.module import Module, Param
```
"""

from burn.module.base import Module, ModuleMapper, ModuleVisitor
from burn.module.param import Param, ParamId

__all__ = ["Module", "ModuleMapper", "ModuleVisitor", "Param", "ParamId"]
