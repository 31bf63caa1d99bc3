"""The bench reads a service's CPU time finer than the kernel's 10 ms ticks, so a small run's share
of one service is not read as zero."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil

from berth.bench.cpu_clock import cpu_seconds

# Spins for about 3 ms of CPU in a thread that then exits, then waits to be read.
_SPIN = """
import sys, threading, time
def spin():
    end = time.thread_time() + 0.003
    while time.thread_time() < end:
        pass
t = threading.Thread(target=spin); t.start(); t.join()
print("spun", flush=True)
sys.stdin.read()
"""


def test_a_few_milliseconds_of_an_exited_thread_are_counted() -> None:
    proc = subprocess.Popen([sys.executable, "-c", _SPIN], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "spun\n"
        # The interpreter's own start-up is in it too; the spin alone is 3 ms.
        assert cpu_seconds(psutil.Process(proc.pid)) >= 0.003
    finally:
        proc.communicate("")


def test_its_own_process_reads_as_process_time() -> None:
    # Ticks would read up to 10 ms below the nanosecond clock `process_time` reads.
    before = time.process_time()
    mine = cpu_seconds(psutil.Process())
    assert before <= mine <= time.process_time()
