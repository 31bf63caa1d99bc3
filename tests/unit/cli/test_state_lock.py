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
        refused = rf"fresh is in use by another berth up or chaos run \(pid {os.getpid()}\)"
        with pytest.raises(CliError, match=refused), holding(state):
            raise AssertionError("the block must not run")
    with holding(state):
        pass  # let go with the process or the block: taken again at once


def test_chaos_refuses_a_state_directory_in_use(tmp_path: Path) -> None:
    from berth.chaos.run import ChaosOptions, run_chaos

    with holding(tmp_path), pytest.raises(CliError, match="is in use by another berth up or chaos run"):
        run_chaos(ChaosOptions(nodes=2, pods=2, state_dir=tmp_path))  # before anything starts
    assert not (tmp_path / "postgres").exists() and not (tmp_path / "logs").exists()
