"""The machine a bench ran on, kept with its result: figures compare only between runs on one
machine, and a result file should say which (CPUs, threads per core, model, Python)."""

from __future__ import annotations

import os
import platform
from pathlib import Path

from ..services import usable_cores

CPUINFO = Path("/proc/cpuinfo")
SIBLINGS = Path("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list")


def describe_machine(cpuinfo: Path = CPUINFO, siblings: Path = SIBLINGS) -> dict[str, str | int]:
    return {"cpus": os.cpu_count() or 1, "usable_cpus": usable_cores(), "threads_per_core": _threads_per_core(siblings),
            "cpu_model": _model(cpuinfo), "python": platform.python_version()}


def summary(machine: dict[str, str | int]) -> str:
    """One line: "16 CPUs (2 threads per core), Intel(R) Xeon(R) Processor, Python 3.12.3"."""
    threads = machine.get("threads_per_core", 0)
    per_core = f" ({threads} threads per core)" if isinstance(threads, int) and threads > 1 else ""
    return f"{machine.get('usable_cpus')} CPUs{per_core}, {machine.get('cpu_model')}, Python {machine.get('python')}"


def _threads_per_core(siblings: Path) -> int:
    """CPU 0's hardware threads ("0,8" or "0-1": 2), 0 when the kernel does not say."""
    try:
        text = siblings.read_text().strip()
    except OSError:
        return 0
    count = 0
    for part in text.split(","):
        low, _, high = part.partition("-")
        try:
            count += int(high or low) - int(low) + 1
        except ValueError:
            return 0
    return count


def _model(cpuinfo: Path) -> str:
    try:
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"
