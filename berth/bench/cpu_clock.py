"""A process's CPU seconds, to the nanosecond where the platform allows.

`/proc/<pid>/stat` counts in clock ticks (10 ms), coarser than a small run's whole share of one
service: forty pods' worth of a queue's work can read as no time at all. Linux keeps each process's
CPU time in nanoseconds behind a CPU-time clock (`clock_getcpuclockid`), which counts the threads that
have exited too; the tick counts are the fallback where that clock cannot be read.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import time

import psutil


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError:
        return None
    # Absent where the platform has no per-process CPU-time clocks.
    return lib if hasattr(lib, "clock_getcpuclockid") else None


_LIBC = _libc()


def _clock_of(pid: int) -> int | None:
    if _LIBC is None:
        return None
    clock = ctypes.c_int()
    if _LIBC.clock_getcpuclockid(pid, ctypes.byref(clock)) != 0:
        return None
    return clock.value


def cpu_seconds(proc: psutil.Process) -> float:
    """User plus system CPU seconds of the process and all its threads, live or exited (children
    not included)."""
    clock = _clock_of(proc.pid)
    if clock is not None:
        with contextlib.suppress(OSError):
            return time.clock_gettime(clock)
    t = proc.cpu_times()
    return t.user + t.system
