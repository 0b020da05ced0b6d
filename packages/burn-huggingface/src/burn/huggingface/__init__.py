"""HuggingFace datasets imported into SQLite, read back as burn `SqliteDataset`s.

`import burn.huggingface` is light; the `datasets` library is imported when an import runs.
"""

from burn.huggingface.hub import HubUnreachableError, hub_endpoint, hub_reachable
from burn.huggingface.loader import HuggingfaceDatasetLoader

__all__ = ["HubUnreachableError", "HuggingfaceDatasetLoader", "hub_endpoint", "hub_reachable"]
