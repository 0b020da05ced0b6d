"""The async forms of reads give the same values as the blocking ones."""

import asyncio

import numpy as np
from burn.backend_tests.helpers import tensor


def test_async_reads(backend):
    t = tensor(backend, np.array([[1.0, 0.0], [0.0, 4.0]]))

    async def read():
        data = await t.to_data_async()
        same = await t.into_data_async()
        scalar = await t.sum().into_scalar_async()
        coords = await t.bool().argwhere_async()
        nonzero = await t.bool().nonzero_async()
        return data, same, scalar, coords, nonzero

    data, same, scalar, coords, nonzero = asyncio.run(read())
    data.assert_eq(t.to_data())
    same.assert_eq(t.to_data())
    assert scalar == 5.0
    assert coords.to_data().to_list() == [[0, 0], [1, 1]]
    assert [c.to_data().to_list() for c in nonzero] == [[0, 1], [0, 1]]
