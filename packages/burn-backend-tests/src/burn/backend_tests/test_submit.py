"""`submit` changes no value: what it started reads back right, and work recorded after it runs
too. (That it does not wait, and that it starts a batch, is backend-specific: Wgpu's and
Fusion's own tests check their queues.)"""

import numpy as np
from burn.backend_tests.helpers import tensor


def test_submit_then_read_gives_the_values(backend):
    x = np.array([[1.0, -2.0], [0.5, 3.0]], dtype=np.float32)
    t = tensor(backend, x)
    y = (t * 2.0 + 1.0).abs().sqrt()
    backend.submit(t.device())
    backend.submit()
    z = y * 3.0  # work recorded after a submit joins the next batch
    backend.sync(t.device())
    np.testing.assert_allclose(y.to_data().as_array(), np.sqrt(np.abs(x * 2 + 1)), rtol=1e-6)
    np.testing.assert_allclose(z.to_data().as_array(), 3 * np.sqrt(np.abs(x * 2 + 1)), rtol=1e-6)
