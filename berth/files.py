"""Writing the files `berth up` leaves for its user: whole or not at all, readable by whom the mode says."""

from __future__ import annotations

import os
from pathlib import Path


def write_atomically(path: Path, data: bytes, mode: int = 0o600) -> None:
    """`data` to `path` through a temporary beside it, its mode set before any byte is written (the
    default 0600: tokens and keys are their owner's alone)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    tmp.replace(path)
