"""The machine Berth runs on: the CPUs it may use (how many filter workers to start), and a
description kept with every bench result, since figures compare only between runs on one machine
(CPUs, threads per core, model, Python)."""

from __future__ import annotations

import os
import platform
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")
SIBLINGS = Path("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list")
CGROUP_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")


def usable_cores(cpu_max: Path = CGROUP_CPU_MAX) -> int:
    """The CPUs this process may use: those it may run on, fewer where a cgroup's quota says so
    (a container limited to 2 CPUs on a 64-core host gets 2)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    try:
        quota, period = cpu_max.read_text().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, int(int(quota) / int(period))))
    except (OSError, ValueError):
        pass  # no cgroup v2 quota to read
    return cores


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
