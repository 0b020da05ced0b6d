"""Metrics that need no model output: learning rate, iteration speed, CPU and GPU readings.

The CPU readings come from `/proc` and `/sys` on Linux, or from `psutil` where it is installed;
the GPU readings from NVML (the `nvidia-ml-py` package, or the driver's own library through
ctypes). Where nothing exposes a reading the metric says `unavailable` and its value is NaN, so
the same training script runs everywhere.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import math
import os
import time

from burn.train.metric.base import FormatOptions, MetricEntry, MetricMetadata, NumericMetricState


class _Reading:
    """A numeric metric whose value is read from the system, counted once per update."""

    input_type = None
    precision = 2
    unit: str | None = None

    def __init__(self):
        self.state = NumericMetricState()

    def name(self) -> str:
        raise NotImplementedError

    def read(self, metadata: MetricMetadata) -> float | None:
        raise NotImplementedError

    def update(self, input, metadata: MetricMetadata) -> MetricEntry:  # noqa: A002
        value = self.read(metadata)
        if value is None:
            self.state.current = math.nan
            return MetricEntry(self.name(), f"{self.name()} unavailable", "nan,0")
        return self.state.update(value, 1, FormatOptions(self.name(), self.precision, self.unit))

    def clear(self) -> None:
        self.state.reset()

    def value(self) -> float:
        return self.state.current_value()

    def running_value(self) -> float:
        return self.state.running_value()

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class LearningRateMetric(_Reading):
    """The learning rate the optimizer used for this step (from the scheduler)."""

    precision = 2

    def name(self) -> str:
        return "Learning Rate"

    def read(self, metadata: MetricMetadata) -> float | None:
        return metadata.lr

    def update(self, input, metadata: MetricMetadata) -> MetricEntry:  # noqa: A002
        if metadata.lr is None:
            return super().update(input, metadata)
        self.state.update(metadata.lr, 1, FormatOptions(self.name()))
        text = f"{self.name()} {metadata.lr:.3e}"
        return MetricEntry(self.name(), text, f"{float(metadata.lr)!r},1")


class IterationSpeedMetric(_Reading):
    """Steps per second since the start of the epoch's split."""

    unit = "iter/s"

    def __init__(self):
        super().__init__()
        self._start: float | None = None

    def name(self) -> str:
        return "Iteration Speed"

    def read(self, metadata: MetricMetadata) -> float | None:
        now = time.perf_counter()
        if self._start is None:
            # The first step's own time is unknown: start the clock now and count from here.
            self._start = now
            self._first = metadata.iteration
            return None
        elapsed = now - self._start
        steps = metadata.iteration - self._first
        return steps / elapsed if elapsed > 0 else None

    def clear(self) -> None:
        super().clear()
        self._start = None


# ------------------------------------------------------------------------------------ CPU
def _psutil():
    try:
        import psutil
    except ImportError:
        return None
    return psutil


def _proc_cpu_times() -> tuple[float, float] | None:
    """(busy, total) jiffies of all CPUs from /proc/stat."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    values = [float(v) for v in fields[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0.0)  # idle + iowait
    total = sum(values[:8])  # guest time is already counted in user time
    return total - idle, total


class CpuUse(_Reading):
    """The share of all CPUs' time spent busy since the previous update, in percent."""

    unit = "%"

    def __init__(self):
        super().__init__()
        self._last = _proc_cpu_times()
        self._ps = _psutil() if self._last is None else None
        if self._ps is not None:
            self._ps.cpu_percent(None)

    def name(self) -> str:
        return "CPU Usage"

    def read(self, metadata: MetricMetadata) -> float | None:
        if self._ps is not None:
            return float(self._ps.cpu_percent(None))
        now = _proc_cpu_times()
        if now is None or self._last is None:
            return None
        busy = now[0] - self._last[0]
        total = now[1] - self._last[1]
        if total <= 0:
            return None
        self._last = now
        return 100.0 * busy / total


def _meminfo() -> dict[str, float] | None:
    try:
        with open("/proc/meminfo") as f:
            lines = f.readlines()
    except OSError:
        return None
    info = {}
    for line in lines:
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts:
            info[key] = float(parts[0]) * (1024.0 if parts[1:] == ["kB"] else 1.0)
    return info


class CpuMemory(_Reading):
    """Host memory in use, in GB (`formatted` also gives the total)."""

    unit = "GB"

    def name(self) -> str:
        return "CPU Memory"

    def _read_bytes(self) -> tuple[float, float] | None:
        info = _meminfo()
        if info and "MemTotal" in info and "MemAvailable" in info:
            return info["MemTotal"] - info["MemAvailable"], info["MemTotal"]
        ps = _psutil()
        if ps is not None:
            vm = ps.virtual_memory()
            return float(vm.total - vm.available), float(vm.total)
        return None

    def read(self, metadata: MetricMetadata) -> float | None:
        found = self._read_bytes()
        if found is None:
            return None
        self._total = found[1]
        return found[0] / 1e9

    def update(self, input, metadata: MetricMetadata) -> MetricEntry:  # noqa: A002
        entry = super().update(input, metadata)
        if math.isnan(self.state.current_value()):
            return entry
        text = f"{self.name()} {self.state.current_value():.2f} / {self._total / 1e9:.2f} GB"
        return MetricEntry(entry.name, text, entry.serialized)


def cpu_temperature() -> float | None:
    """The hottest CPU sensor in degrees Celsius, or None where the OS exposes none."""
    ps = _psutil()
    if ps is not None and hasattr(ps, "sensors_temperatures"):
        try:
            sensors = ps.sensors_temperatures()
        except Exception:  # some platforms raise instead of returning nothing
            sensors = {}
        readings = [t.current for entries in sensors.values() for t in entries if t.current]
        if readings:
            return float(max(readings))
    readings = []
    for zone in glob.glob("/sys/class/thermal/thermal_zone*"):
        try:
            with open(os.path.join(zone, "type")) as f:
                kind = f.read().strip().lower()
            with open(os.path.join(zone, "temp")) as f:
                millis = float(f.read().strip())
        except (OSError, ValueError):
            continue
        if "cpu" in kind or "pkg" in kind or "x86" in kind or "soc" in kind or "k10" in kind:
            readings.append(millis / 1000.0)
    for sensor in glob.glob("/sys/class/hwmon/hwmon*/temp*_input"):
        try:
            with open(os.path.join(os.path.dirname(sensor), "name")) as f:
                chip = f.read().strip().lower()
            with open(sensor) as f:
                millis = float(f.read().strip())
        except (OSError, ValueError):
            continue
        if chip in ("coretemp", "k10temp", "zenpower", "cpu_thermal"):
            readings.append(millis / 1000.0)
    return max(readings) if readings else None


class CpuTemperature(_Reading):
    """The hottest CPU sensor, in degrees Celsius; `unavailable` where the OS exposes none
    (virtual machines and containers usually do not)."""

    unit = "°C"
    precision = 1

    def name(self) -> str:
        return "CPU Temperature"

    def available(self) -> bool:
        return cpu_temperature() is not None

    def read(self, metadata: MetricMetadata) -> float | None:
        return cpu_temperature()


# ------------------------------------------------------------------------------------ GPU
class _Nvml:
    """Memory and utilisation of NVIDIA GPUs through NVML, or None where NVML is absent."""

    def __init__(self):
        self.kind = None
        try:
            import pynvml

            pynvml.nvmlInit()
            self.kind, self.lib = "pynvml", pynvml
            return
        except Exception:  # not installed, or no driver: try the driver's library directly
            pass
        name = ctypes.util.find_library("nvidia-ml") or "libnvidia-ml.so.1"
        try:
            lib = ctypes.CDLL(name)
            if lib.nvmlInit_v2() != 0:
                return
        except (OSError, AttributeError):
            return
        self.kind, self.lib = "ctypes", lib

    def available(self) -> bool:
        return self.kind is not None

    def count(self) -> int:
        if self.kind == "pynvml":
            return int(self.lib.nvmlDeviceGetCount())
        n = ctypes.c_uint()
        return n.value if self.lib.nvmlDeviceGetCount_v2(ctypes.byref(n)) == 0 else 0

    def read(self, index: int) -> tuple[float, float, float] | None:
        """(used bytes, total bytes, utilisation percent) of GPU `index`."""
        if self.kind == "pynvml":
            handle = self.lib.nvmlDeviceGetHandleByIndex(index)
            mem = self.lib.nvmlDeviceGetMemoryInfo(handle)
            util = self.lib.nvmlDeviceGetUtilizationRates(handle)
            return float(mem.used), float(mem.total), float(util.gpu)

        class Memory(ctypes.Structure):
            _fields_ = [
                ("total", ctypes.c_ulonglong),
                ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong),
            ]

        class Utilization(ctypes.Structure):
            _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]

        handle = ctypes.c_void_p()
        if self.lib.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(handle)) != 0:
            return None
        mem, util = Memory(), Utilization()
        if self.lib.nvmlDeviceGetMemoryInfo(handle, ctypes.byref(mem)) != 0:
            return None
        if self.lib.nvmlDeviceGetUtilizationRates(handle, ctypes.byref(util)) != 0:
            return None
        return float(mem.used), float(mem.total), float(util.gpu)


class CudaMetric:
    """Memory in use and utilisation of each NVIDIA GPU (a text metric, as in Burn).

    Needs NVML: burn-train's `nvml` extra (`pip install nvidia-ml-py`), or just the NVIDIA
    driver. Without it the metric reports `unavailable`.
    """

    input_type = None

    def __init__(self):
        self.nvml = _Nvml()

    def name(self) -> str:
        return "Cuda"

    def available(self) -> bool:
        return self.nvml.available()

    def readings(self) -> list[tuple[float, float, float]]:
        if not self.nvml.available():
            return []
        found = []
        for index in range(self.nvml.count()):
            reading = self.nvml.read(index)
            if reading is not None:
                found.append(reading)
        return found

    def update(self, input, metadata: MetricMetadata) -> MetricEntry:  # noqa: A002
        readings = self.readings()
        if not readings:
            return MetricEntry(self.name(), "GPU unavailable", "unavailable")
        parts = [
            f"GPU #{i} memory {used / 1e9:.2f}/{total / 1e9:.2f} GB, use {util:.0f}%"
            for i, (used, total, util) in enumerate(readings)
        ]
        serialized = ";".join(
            f"{used:.0f},{total:.0f},{util:.0f}" for used, total, util in readings
        )
        return MetricEntry(self.name(), " | ".join(parts), serialized)

    def clear(self) -> None:
        pass
