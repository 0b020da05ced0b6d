"""The errors of burn.collective."""

from __future__ import annotations

from burn.tensor.errors import BurnError


class CollectiveError(BurnError):
    """Processes of a job that disagree (parameters, shapes, counts) or a collective misused."""
