"""One `berth up` per state directory.

A second `berth up` on a directory in use would take the first one's broker and database for
leftovers of a crashed run and kill them, then remove its berth.json and kubeconfig on the way
out. `berth up` (and `berth chaos --state-dir`) holds an exclusive lock on DIR/berth.lock while it
runs; the lock goes with the process, so a launcher that crashed leaves none behind (and its
children are reaped as before).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from .client import CliError

LOCK_FILE = "berth.lock"


@contextlib.contextmanager
def holding(state: Path) -> Iterator[None]:
    """Hold `state` for this process, or raise CliError naming the `berth up` that holds it."""
    state.mkdir(parents=True, exist_ok=True)
    fd = os.open(state / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)  # not inherited by the children
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
            raise CliError(f"{state} is in use by another berth up or chaos run (pid {holder}); stop that one "
                           "first, or give this one another --state-dir") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        os.close(fd)
