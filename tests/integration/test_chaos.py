"""`berth chaos` as a user runs it, small: the queue, the binder and the broker SIGKILLed while pods
are applied through the gateway; every invariant holds afterwards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def test_berth_chaos_kills_and_every_invariant_holds(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("KAFKA_BOOTSTRAP_SERVERS", "DATABASE_URL")}
    report = tmp_path / "chaos.md"
    done = subprocess.run([sys.executable, "-m", "berth", "chaos", "--nodes", "100", "--pods", "1500", "--rate", "150",
                           "--faults", "3", "--targets", "queue,binder,tansu", "--seed", "3", "-o", "json",
                           "--report", str(report)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["ok"] and set(result["checks"].values()) == {"ok"}
    assert sorted(f["target"] for f in result["faults"]) == ["binder", "queue", "tansu"]
    assert all(f["back_s"] is not None for f in result["faults"]), result["faults"]
    assert all(f["stall_s"] is not None for f in result["faults"]), "binding resumed after every fault"
    assert result["accepted"] == result["bound"] + result["pending"] and result["accepted"] >= 1500
    assert "| killed | at (s) |" in report.read_text()
    assert "log rebuilt from the event store" in done.stderr
