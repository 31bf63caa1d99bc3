"""A tiny `berth bench --mode cluster` keeps the cluster benchmark working end to end (every service
as a process, pods through Kafka, the log checked afterwards); no timing is asserted."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from berth.services import default_propose, pipeline_most

from .fixtures import BerthTestEnv
from .helpers import ROOT, service_env

pytestmark = pytest.mark.integration
KEYS = {"workload", "mode", "nodes", "pods", "pods_per_second", "attempt_latency_p50_ms",
        "attempt_latency_p99_ms", "e2e_latency_p50_ms", "e2e_latency_p99_ms"}


@pytest.mark.parametrize("workload", ["SchedulingBasic", "Preemption", "PreemptionAsync"])
async def test_cluster_bench_smoke(berth_env: BerthTestEnv, tmp_path: Path, workload: str) -> None:
    # PreemptionAsync: room for the preemptors its churn sends in, one every 50 ms.
    churn = ["--nodes", "40", "--churn-interval", "0.05"] if workload == "PreemptionAsync" else ["--nodes", "12"]
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "berth", "bench", "--mode", "cluster", "--workload", workload, *churn,
        "--pods", "40", "--filter-workers", "2", "--out-dir", str(tmp_path), "-o", "json", "--no-progress",
        "--timeout", "120",
        env=service_env(berth_env), cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 240)
    assert proc.returncode == 0, err.decode()[-3000:]
    result = json.loads(out)
    assert KEYS <= set(result)
    assert result["mode"] == "cluster" and result["filter_workers"] == 2 and result["workload"] == workload
    assert result["problems"] == []
    assert "in the warm-up" not in err.decode()  # the worker in use answered, a spare rested, in time
    assert result["bound"] + result["pending"] == result["pods"] == 40
    assert result["sent_per_pod"] >= 1  # every measured pod went to the workers at least once
    assert set(result["cpu_seconds"]) >= {"queue", "filter", "binder", "preemption", "projector"}
    assert result["queue_busy"] > 0 and 0 <= result["queue_waited"] <= 1  # shares of the measured run
    spread = result["pods_per_node"]  # every node counted, the pods running before too
    assert 0 <= spread["min"] <= spread["median"] <= spread["p99"] <= spread["max"] and spread["max"] >= 1
    assert list(tmp_path.glob("*.json")) and list(tmp_path.glob("*.png"))
    # The churn's preemptors went in while the measured pods were scheduled, and were checked too.
    assert (result["churn_submitted"] > 0) == (workload == "PreemptionAsync")


BENCH_DECIDES = {"BERTH_QUEUE_PROPOSE", "BERTH_QUEUE_PIPELINE_MOST"}
"""Left unset, as `berth bench` run by hand finds them: it chooses as `berth up` does."""


async def test_scale_sweep_smoke(berth_env: BerthTestEnv, tmp_path: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "berth", "bench", "--nodes", "12", "--pods", "30", "--scale-sweep", "1,2",
        "--rounds", "2",
        "--config", str(ROOT / "examples" / "bench" / "score-all-nodes.yaml"),
        "--out-dir", str(tmp_path), "-o", "json", "--no-progress", "--timeout", "120",
        env={k: v for k, v in service_env(berth_env).items() if k not in BENCH_DECIDES}, cwd=ROOT,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 300)
    assert proc.returncode == 0, err.decode()[-3000:]
    summary = json.loads(out)
    assert summary["mode"] == "cluster" and summary["problems"] == []
    assert summary["machine"]["usable_cpus"] >= 1
    assert [p["filter_workers"] for p in summary["sweep"]] == [1, 2]
    # Two rounds: each count's point is one of its two runs, the slower (the lower middle).
    assert summary["rounds"] == 2
    for point in summary["sweep"]:
        assert len(point["rounds_pods_per_second"]) == 2
        assert point["pods_per_second"] == min(point["rounds_pods_per_second"])
    # Each count runs as `berth up` would run it: one worker ranks in the queue, two propose
    # (on a machine of few cores, while the queue's ranking is dear).
    assert [p["propose"] for p in summary["sweep"]] == ["no", "auto" if default_propose(2) == "auto" else "yes"]
    assert summary["sweep"][0]["proposed_share"] == 0.0
    assert all(0.0 <= p["proposed_share"] <= 1.0 for p in summary["sweep"])
    # And keeps at most as many batches out as the machine has cores beside the queue's.
    assert [p["pipeline_most"] for p in summary["sweep"]] == [pipeline_most()] * 2
    first, second = summary["sweep"]
    assert first["speedup"] == 1.0 and first["efficiency"] == 1.0
    assert second["efficiency"] == second["speedup"] / 2 and second["pods_per_second"] > 0
    assert first["step"] is None and second["step"] == second["speedup"]  # against the count before
    # Paired round by round: each of the second count's runs against the first's of that round.
    assert first["paired_step"] is None and second["paired_steps"] == [
        b / a for a, b in zip(first["rounds_pods_per_second"], second["rounds_pods_per_second"])]
    assert second["paired_step"] == pytest.approx(sum(second["paired_steps"]) / 2)
    # Where that median lies, from two pairs: between them, half the time.
    assert first["paired_interval"] is None and second["paired_interval"] == {
        "low": min(second["paired_steps"]), "high": max(second["paired_steps"]), "confidence": 0.5}
    for point in summary["sweep"]:  # each process's CPU per pod, and the sum
        ms = point["cpu_ms_per_pod"]
        assert {"queue", "filter", "total"} <= set(ms)  # the broker too where the bench started it
        assert ms["total"] == pytest.approx(sum(v for k, v in ms.items() if k != "total"))
        assert point["sent_per_pod"] >= 1
        assert point["queue_busy"] > 0  # the queue's CPU seconds per second of the run
        assert 0 <= point["queue_waited"] <= 1  # its share of the run waiting for answers
    assert list(tmp_path.glob("*sweep*.json")) and list(tmp_path.glob("*sweep*.png"))
