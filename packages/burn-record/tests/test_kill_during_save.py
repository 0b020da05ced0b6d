"""SIGKILL at random points of a loop of saves: the file always loads whole, and the next save
removes the temporary file a killed save left behind.

`BURN_KILL_RUNS` sets the number of kills (default 4, a few seconds); the figures are printed
with `-s`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from burn.record import NamedMpkFileRecorder, NamedMpkGzFileRecorder, ParamRecord
from burn.record.atomic import temp_files_of
from burn.tensor import TensorData

SAVER = textwrap.dedent(
    """
    import sys
    import numpy as np
    from burn.record import NamedMpkFileRecorder, NamedMpkGzFileRecorder, ParamRecord
    from burn.tensor import TensorData

    recorder = {"mpk": NamedMpkFileRecorder, "mpk.gz": NamedMpkGzFileRecorder}[sys.argv[2]]()
    values = np.random.default_rng(0).standard_normal((512, 1024)).astype(np.float32)
    i = 0
    while True:
        i += 1
        record = {"step": i, "w": ParamRecord("w", TensorData(values + np.float32(i)))}
        recorder.record(record, sys.argv[1])
        print(i, flush=True)
    """
)

RECORDERS = {"mpk": NamedMpkFileRecorder(), "mpk.gz": NamedMpkGzFileRecorder()}


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_kills_during_saves_leave_loadable_files_and_no_temp_files(tmp_path):
    runs = int(os.environ.get("BURN_KILL_RUNS", "4"))
    rng = np.random.default_rng(1)
    base = np.random.default_rng(0).standard_normal((512, 1024)).astype(np.float32)
    intact = mid_write = 0
    for run in range(runs):
        ext = "mpk" if run % 2 == 0 else "mpk.gz"
        recorder = RECORDERS[ext]
        path = tmp_path / f"model-{ext}"
        child = subprocess.Popen(
            [sys.executable, "-c", SAVER, str(path), ext],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
        )
        try:
            assert child.stdout.readline().strip() == "1"  # one whole save first
            time.sleep(float(rng.uniform(0.0, 0.25)))
        finally:
            os.kill(child.pid, signal.SIGKILL)
            child.wait(timeout=30)
        target = recorder.file_path(path)
        left = temp_files_of(target)
        mid_write += bool(left)
        record = recorder.load(path)
        step = record["step"]
        np.testing.assert_array_equal(record["w"].data.array, base + np.float32(step))
        intact += 1
        # The next save (this process's) removes what the killed one left.
        recorder.record({"step": 0, "w": ParamRecord("w", TensorData(base[:1]))}, path)
        assert not temp_files_of(target), temp_files_of(target)
    print(
        f"\n[kill -9] {runs} kills during saves: {intact} intact loads, {mid_write} left a "
        "temporary file, 0 temporary files after the next save"
    )
    assert intact == runs
