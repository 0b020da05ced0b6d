"""set_print_options changes how tensors print (precision, summarisation)."""

import numpy as np
from burn.backend_tests.helpers import tensor
from burn.tensor import PrintOptions, set_print_options


def test_print_options_precision_and_threshold(backend):
    t = tensor(backend, np.array([1.0, 2.5, 1 / 3]))
    try:
        set_print_options(PrintOptions(precision=2))
        assert "[1.00, 2.50, 0.33]" in repr(t)
        set_print_options(PrintOptions(threshold=4, edge_items=1))
        assert "..." in repr(tensor(backend, np.arange(10.0)))
    finally:
        set_print_options(PrintOptions())
    assert "0.33333334" in repr(t) or "0.3333333333333333" in repr(t)
