"""Backend discovery scans the entry points once per process; `refresh()` scans again."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest
from burn.backend import NdArray, registry
from burn.tensor import BackendNotFoundError, Tensor


@pytest.fixture
def scans(monkeypatch):
    """Counts the scans of the `burn.backends` group, starting from an empty cache."""
    real = registry.entry_points
    calls: list[str] = []

    def counting_entry_points(*, group):
        calls.append(group)
        return real(group=group)

    monkeypatch.setattr(registry, "entry_points", counting_entry_points)
    monkeypatch.setattr(registry, "_discovered", None)
    yield calls
    monkeypatch.undo()
    registry.refresh()  # leave the real installation's view behind


def test_first_use_scans_once_and_later_calls_reuse_it(scans):
    registry.available()
    assert scans == [registry.GROUP]
    for _ in range(5):
        Tensor.from_data([1.0, 2.0])  # no device: resolves the default backend
        registry.available()
        registry.get("ndarray")
        registry.backends()
    assert len(scans) == 1


def test_refresh_scans_again_and_sees_new_backends(scans, monkeypatch):
    registry.available()
    assert "Extra" not in registry.available()
    extra = EntryPoint("Extra", "burn.ndarray:NdArray", registry.GROUP)
    counting = registry.entry_points

    def with_extra(*, group):
        return [*counting(group=group), extra]

    monkeypatch.setattr(registry, "entry_points", with_extra)
    assert "Extra" not in registry.available()  # cached: the new package is not seen yet
    assert "Extra" in registry.refresh()
    assert len(scans) == 2
    assert registry.get("Extra") is NdArray


def test_refresh_keeps_loaded_backends_and_drops_removed_ones(scans, monkeypatch):
    before = registry.get("NdArray")
    registry.refresh()
    assert registry.get("NdArray") is before  # tensors made before a refresh stay valid

    real = registry.entry_points

    def without_ndarray(*, group):
        return [ep for ep in real(group=group) if ep.name != "NdArray"]

    monkeypatch.setattr(registry, "entry_points", without_ndarray)
    assert "NdArray" not in registry.refresh()
    with pytest.raises(BackendNotFoundError, match="burn-ndarray"):
        registry.get("NdArray")


def test_the_real_installation_is_back_after_these_tests():
    assert "NdArray" in registry.available()
    assert registry.get("NdArray") is NdArray


def test_refresh_is_exported():
    import burn.backend

    assert burn.backend.refresh is registry.refresh
