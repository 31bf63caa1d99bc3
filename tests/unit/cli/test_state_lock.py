"""One `berth up` per state directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from berth.client import CliError
from berth.state_lock import LOCK_FILE, holding


def test_a_state_directory_in_use_is_refused_until_let_go(tmp_path: Path) -> None:
    state = tmp_path / "fresh"
    with holding(state):
        assert (state / LOCK_FILE).read_text() == f"{os.getpid()}\n"
        with pytest.raises(CliError, match=rf"fresh is in use by another berth up \(pid {os.getpid()}\)"), \
                holding(state):
            raise AssertionError("the block must not run")
    with holding(state):
        pass  # let go with the process or the block: taken again at once
