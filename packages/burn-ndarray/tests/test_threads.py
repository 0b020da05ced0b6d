"""Importing burn.ndarray sets numpy's BLAS threads unless the user chose them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from burn.ndarray import threads
from burn.tensor.errors import UsageError

PROBE = """
import json
import numpy  # noqa: F401  (loads the BLAS)
from threadpoolctl import threadpool_info
before = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
import burn.ndarray
from burn.ndarray import threads
print(json.dumps({"before": before, "after": threads.blas_threads(),
                  "default": threads.default_blas_threads()}))
"""


def _probe(**env: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if k not in threads.USER_THREAD_VARIABLES}
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def blas_found() -> None:
    if threads.blas_threads() is None:
        pytest.skip("numpy's BLAS is not one threadpoolctl knows")


def test_default_is_half_the_cores_at_least_one(blas_found):
    got = _probe()
    assert got["default"] == max(1, threads.usable_cores() // 2)
    assert got["after"] == got["default"]


@pytest.mark.parametrize("name", threads.USER_THREAD_VARIABLES)
def test_a_users_choice_is_kept(blas_found, name):
    cores = threads.usable_cores()
    if cores < 2 and name != "MKL_NUM_THREADS":
        pytest.skip("one core: every choice is the default")
    chosen = str(cores) if name != "MKL_NUM_THREADS" else "1"
    got = _probe(**{name: chosen})
    assert got["after"] == got["before"][0]  # untouched by the import


def test_set_blas_threads_changes_and_validates(blas_found):
    old = threads.blas_threads()
    try:
        threads.set_blas_threads(1)
        assert threads.blas_threads() == 1
    finally:
        threads.set_blas_threads(old)
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(UsageError, match="set_blas_threads"):
            threads.set_blas_threads(bad)
