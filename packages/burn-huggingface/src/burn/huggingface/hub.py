"""A quick answer to "is the HuggingFace hub there?", so offline runs fail in a second.

Without it, `datasets` retries its HTTP calls for tens of seconds before giving up.
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request

from burn.data import DatasetError

DEFAULT_ENDPOINT = "https://huggingface.co"


class HubUnreachableError(DatasetError, ConnectionError):
    """The HuggingFace hub cannot be reached (offline, blocked, or `HF_HUB_OFFLINE` is set)."""


def hub_endpoint() -> str:
    """The hub's address: `$HF_ENDPOINT`, else huggingface.co."""
    return os.environ.get("HF_ENDPOINT", DEFAULT_ENDPOINT).rstrip("/")


def offline_requested() -> bool:
    """True when the user asked HuggingFace tools not to use the network."""
    return any(
        os.environ.get(var, "").strip().lower() in ("1", "true", "yes", "on")
        for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
    )


def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the hub answers one HTTP request within `timeout` seconds (any status counts).

    Goes through urllib, so proxy settings in the environment are honoured.
    """
    if offline_requested():
        return False
    request = urllib.request.Request(hub_endpoint() + "/api/status", method="HEAD")
    try:
        with urllib.request.urlopen(request, timeout=timeout):
            return True
    except urllib.error.HTTPError:
        return True  # it answered, even if not with 200
    except (urllib.error.URLError, OSError, ValueError):
        return False
