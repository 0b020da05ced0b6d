"""burn-backend-tests: the conformance suite every backend runs.

Test modules mirror Burn's (`test_add.py` holds `test_add_d2`, `test_add_broadcast`...). Each op
is checked against numpy in float64 on random inputs and on edge cases.
"""
