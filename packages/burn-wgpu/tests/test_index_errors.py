"""Indices computed on the device are range-checked there: an out-of-range one is reported at
the next read from the device (as CUDA reports device-side asserts), and the runtime goes on."""

from __future__ import annotations

import numpy as np
import pytest
from burn.tensor import Int, Tensor
from burn.tensor.errors import OutOfRangeError
from burn.wgpu import Wgpu


def floats(values):
    return Tensor.from_data(np.asarray(values, np.float32), Wgpu.device())


def device_indices(values):
    """Int indices whose values exist only on the GPU (an argmax plus an offset)."""
    values = np.asarray(values)
    one_hot = np.zeros((*values.shape, 8), np.float32)
    base = values.min()
    np.put_along_axis(one_hot, (values - base)[..., None], 1.0, axis=-1)
    indices = floats(one_hot).argmax(values.ndim).squeeze(values.ndim) + int(base)
    assert indices.primitive.host is None  # the host-side check cannot see them
    return indices


def test_in_range_device_indices_gather_the_right_values():
    x = floats([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    got = x.gather(1, device_indices([[2, 0], [1, 1]]))
    np.testing.assert_array_equal(got.to_data().array, [[3.0, 1.0], [5.0, 5.0]])


@pytest.mark.parametrize("bad", [3, 7, -1])
def test_out_of_range_device_indices_fail_at_the_next_read(bad):
    x = floats([[1.0, 2.0, 3.0]])
    gathered = x.gather(1, device_indices([[0, bad]]))  # recorded, not yet run
    with pytest.raises(OutOfRangeError, match="gather.*computed on the device"):
        gathered.to_data()
    # The error is reported once; the runtime keeps working.
    np.testing.assert_array_equal((x * 2.0).to_data().array, [[2.0, 4.0, 6.0]])
    np.testing.assert_array_equal(x.gather(1, device_indices([[1, 2]])).to_data().array, [[2, 3]])


def test_select_reports_through_its_gather():
    x = floats([[1.0, 2.0], [3.0, 4.0]])
    indices = device_indices([[0, 5]]).reshape([2])
    with pytest.raises(OutOfRangeError, match="select"):
        x.select(0, indices).to_data()


def test_scatter_add_reports_and_sync_checks_too():
    x = floats([[0.0, 0.0, 0.0]])
    values = floats([[1.0, 1.0]])
    x.scatter(1, device_indices([[0, 4]]), values)
    with pytest.raises(OutOfRangeError, match="scatter_add"):
        Wgpu.sync()
    ok = x.scatter(1, device_indices([[2, 2]]), values)
    np.testing.assert_array_equal(ok.to_data().array, [[0.0, 0.0, 2.0]])


def test_host_known_indices_still_fail_at_once():
    x = floats([[1.0, 2.0, 3.0]])
    with pytest.raises(OutOfRangeError, match="index 5"):
        x.gather(1, Tensor[Wgpu, 2, Int].from_data(np.array([[5]], np.int32), Wgpu.device()))


def test_a_read_after_a_gather_brings_the_error_word_back_with_the_data(monkeypatch):
    """The check costs no second round trip: the data and the error word are copied into one
    mappable buffer by one submission (no separate `read_buffer` of the error word)."""
    x = floats([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    gathered = x.gather(1, device_indices([[2, 0], [1, 1]]))
    queue = Wgpu.runtime().queue
    calls = []
    monkeypatch.setattr(
        queue,
        "read_buffer",
        lambda *a, read=queue.read_buffer, **k: calls.append(a) or read(*a, **k),
    )
    np.testing.assert_array_equal(gathered.to_data().array, [[3.0, 1.0], [5.0, 5.0]])
    assert calls == []
    doubled = (x * 2.0).to_data().array  # computed on the device; nothing left to check
    np.testing.assert_array_equal(doubled[0], [2.0, 4.0, 6.0])
    assert len(calls) == 1


def _count_round_trips(monkeypatch) -> list:
    """Each wait for the device from here on: a `read_buffer` or a combined `_read_ranges`."""
    rt = Wgpu.runtime()
    calls: list = []
    monkeypatch.setattr(
        rt.queue,
        "read_buffer",
        lambda *a, read=rt.queue.read_buffer, **k: calls.append("read_buffer") or read(*a, **k),
    )
    monkeypatch.setattr(
        rt,
        "_read_ranges",
        lambda ranges, read=rt._read_ranges: calls.append(len(ranges)) or read(ranges),
    )
    return calls


def test_several_tensors_come_back_in_one_round_trip(monkeypatch):
    """`Tensor.to_data_many` of device-computed tensors: one combined read (uploaded values are
    served from their host copy), with the error word of a gather in the same round trip."""
    x = floats([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    gathered = x.gather(1, device_indices([[2, 0], [1, 1]]))
    loss = gathered.mean()
    scaled = x.swap_dims(0, 1) * 2.0
    calls = _count_round_trips(monkeypatch)
    datas = Tensor.to_data_many([loss, gathered, x, scaled])
    assert calls == [3 + 1]  # three device tensors and the error word; x has a host copy
    np.testing.assert_allclose(datas[0].array, [3.5])
    np.testing.assert_array_equal(datas[1].array, [[3.0, 1.0], [5.0, 5.0]])
    np.testing.assert_array_equal(datas[2].array, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    np.testing.assert_array_equal(datas[3].array, [[2.0, 8.0], [4.0, 10.0], [6.0, 12.0]])


def test_an_index_error_is_raised_by_a_read_of_several_tensors():
    x = floats([[1.0, 2.0, 3.0]])
    bad = x.gather(1, device_indices([[7]]))
    with pytest.raises(OutOfRangeError, match="gather"):
        Tensor.to_data_many([x * 2.0, bad])
    np.testing.assert_array_equal((x + 1.0).to_data().array, [[2.0, 3.0, 4.0]])
