"""A tiny run of `berth bench` keeps the command working; no timing is asserted."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from berth.bench.cluster import PROBE_NAME, workload_pods_per_node
from berth.bench.ledger import Ledger
from berth.bench.stats import (
    median,
    median_interval,
    median_run,
    paired_interval,
    paired_steps,
    percentile,
    spread_summary,
    throughput_series,
)
from berth.bench_cmd import _sweep_footnote, _sweep_table, plot_sweep, sweep_points, with_config
from berth.cli import main
from shared.events import NODE_SHARDS, NodeUpserted, PodBound, PodSubmitted
from shared.workloads import generate
from tests.builders import MakeNode, MakePod

ROOT = Path(__file__).resolve().parents[3]

KEYS = {"workload", "mode", "nodes", "pods", "pods_per_second", "attempt_latency_p50_ms",
        "attempt_latency_p99_ms", "e2e_latency_p50_ms", "e2e_latency_p99_ms"}


@pytest.mark.parametrize("workload", ["SchedulingBasic", "Preemption", "PreemptionAsync", "PodAntiAffinity",
                                      "TopologySpreading"])
def test_bench_smoke(workload: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["bench", "--workload", workload, "--nodes", "12", "--pods", "20", "--out-dir", str(tmp_path),
                 "-o", "json", "--no-progress"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0
    assert KEYS <= set(result)
    assert result["problems"] == []
    assert result["workload"] == workload and result["mode"] == "inprocess"
    assert list(tmp_path.glob("*.json")) and list(tmp_path.glob("*.png"))
    assert result["cpu_ms_per_pod"]["total"] == pytest.approx(result["cpu_ms_per_pod"]["inprocess"])
    assert result["machine"]["cpus"] >= 1 and result["machine"]["python"]


def test_bench_runs_a_scheduler_configuration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--config as simulate takes it: the workload is scheduled under that configuration."""
    config = ROOT / "examples" / "bench" / "score-all-nodes.yaml"
    workload = with_config(generate("SchedulingBasic", 12, 20), config)
    assert workload.cluster.config is not None and workload.cluster.config.percentage_of_nodes_to_score == 100
    code = main(["bench", "--nodes", "120", "--pods", "20", "--out-dir", str(tmp_path), "-o", "json",
                 "--no-progress", "--config", str(config)])
    assert code == 0 and json.loads(capsys.readouterr().out)["bound"] == 20


@pytest.mark.parametrize("content,says", [
    (None, "cannot read"),
    ("apiVersion: v1\nkind: Node\nmetadata: {name: n}\n", "no KubeSchedulerConfiguration"),
])
def test_bench_refuses_a_file_without_a_configuration(content: str | None, says: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "ksc.yaml"
    if content is not None:
        config.write_text(content)
    assert main(["bench", "--nodes", "4", "--pods", "4", "--config", str(config)]) == 2
    assert says in capsys.readouterr().err


def test_the_spread_of_pods_over_nodes_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # SchedulingBasic on 12 nodes: 12 pods running before, one a node, then 24 more that
    # LeastAllocated puts two on each node.
    assert main(["bench", "--nodes", "12", "--pods", "24", "--out-dir", str(tmp_path), "--no-progress"]) == 0
    assert "pods per node   min 3, median 3, p99 3, max 3" in capsys.readouterr().out


def test_the_cluster_spread_leaves_out_the_warm_up_probes() -> None:
    ledger = Ledger()
    now = datetime.now(UTC)
    for name in ("a", "b"):
        ledger.view.apply_payload(NodeUpserted(node=MakeNode().name(name).capacity(cpu="4", pods="110").obj()), now)
    for name, uid, node in (("web", "u1", "a"), (PROBE_NAME, "u2", "b"), (f"{PROBE_NAME}-3", "u3", "a")):
        ledger.view.apply_payload(PodSubmitted(pod=MakePod().name(name).uid(uid).obj()), now)
        ledger.view.apply_payload(PodBound(pod_uid=uid, node_name=node, attempt_id=f"bind-{uid}"), now)
    assert sorted(len(i.pods) for i in ledger.view.snapshot().node_info_list) == [1, 2]
    assert sorted(workload_pods_per_node(ledger)) == [0, 1]


def test_spread_summary_counts_every_node() -> None:
    assert spread_summary([0, 5, 1, 1, 2]) == {"min": 0, "median": 1, "p99": 5, "max": 5}
    assert spread_summary([]) == {}


def test_percentile_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50.0
    assert percentile(values, 99) == 99.0
    assert percentile([], 50) == 0.0


def test_the_queue_metrics_give_pods_sent_and_attempt_latency() -> None:
    from berth.bench.fleet_metrics import answer_wait_seconds, attempt_latency, sent_pods, walked_again_pods

    text = "\n".join([
        "# TYPE berth_queue_batch_pods histogram",
        'berth_queue_batch_pods_bucket{le="256.0"} 3.0',
        "berth_queue_batch_pods_sum 612.0",
        "berth_queue_walked_again_pods_total 17.0",
        "berth_queue_answer_wait_seconds_total 2.5",
        'scheduler_scheduling_attempt_duration_seconds_bucket{result="scheduled",le="0.01"} 90.0',
        'scheduler_scheduling_attempt_duration_seconds_bucket{result="scheduled",le="0.1"} 99.0',
        'scheduler_scheduling_attempt_duration_seconds_bucket{result="scheduled",le="+Inf"} 100.0',
    ])
    assert sent_pods(text) == 612.0
    assert sent_pods("") == 0.0
    assert walked_again_pods(text) == 17.0 and walked_again_pods("") == 0.0
    assert answer_wait_seconds(text) == 2.5 and answer_wait_seconds("") == 0.0
    assert attempt_latency(text) == (0.01, 0.1)
    assert attempt_latency("") == (0.0, 0.0)


def test_throughput_series_buckets_completions() -> None:
    assert throughput_series([0.1, 0.2, 1.5], bucket=1.0) == [(1.0, 2.0), (2.0, 1.0)]


@pytest.mark.parametrize("sweep", ["2,1", "0,1", "1,x", ""])
def test_scale_sweep_needs_increasing_positive_counts(sweep: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["bench", "--scale-sweep", sweep])
    assert exit_.value.code == 2 and "--scale-sweep" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["bench", "--mode", "cluster", "--filter-workers"], ["up", "--filter-workers"],
                                     ["demo", "--filter-workers"]])
@pytest.mark.parametrize("workers", [0, NODE_SHARDS + 1])
def test_filter_workers_are_between_one_and_the_filter_request_partitions(
        command: list[str], workers: int, capsys: pytest.CaptureFixture[str]) -> None:
    """More replicas than partitions of filter-requests would sit idle: refused before anything starts."""
    code = main([*command, str(workers)])
    assert code == 2
    assert (f"--filter-workers: filter workers must be between 1 and {NODE_SHARDS} "
            f"(the partitions of filter-requests), got {workers}") in capsys.readouterr().err


def test_scale_sweep_stops_at_the_filter_request_partitions(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["bench", "--scale-sweep", f"1,2,{NODE_SHARDS * 2}"])
    assert exit_.value.code == 2
    assert f"filter workers must be between 1 and {NODE_SHARDS}" in capsys.readouterr().err


@pytest.mark.parametrize(("extra", "says"), [
    (["--record", "run.jsonl"], "--record"),
    (["--mode", "inprocess"], "--mode inprocess"),
])
def test_scale_sweep_refuses_options_it_cannot_honour(extra: list[str], says: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["bench", "--nodes", "4", "--pods", "4", "--scale-sweep", "1,2", *extra])
    assert code == 2 and says in capsys.readouterr().err


def test_cluster_sampler_counts_the_embedded_stack_and_its_children(tmp_path: Path) -> None:
    """The broker and the database are sampled with the services; the database's work is in its
    child processes, counted while they run and after they exit."""
    import subprocess
    import sys
    import time
    from types import SimpleNamespace

    import psutil

    from berth.bench.cluster import _Sampler

    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.6: pass\n"
    parent = f"import subprocess, sys, time\nsubprocess.run([sys.executable, '-c', {burn!r}])\ntime.sleep(30)\n"
    database = subprocess.Popen([sys.executable, "-c", parent])
    service = subprocess.Popen([sys.executable, "-c", burn + "time.sleep(30)\n"])
    try:
        fleet = SimpleNamespace(members={"queue": SimpleNamespace(spec=SimpleNamespace(name="queue"),
                                                                  process=SimpleNamespace(pid=service.pid))})
        sampler = _Sampler(fleet, {"postgres": database.pid})  # type: ignore[arg-type]  # a fake fleet
        deadline = time.monotonic() + 20
        seen = sampler.cpu()
        while time.monotonic() < deadline and not (seen["database"] >= 0.3 and seen["queue"] >= 0.3):
            seen = sampler.cpu()  # the child is read while it burns
            time.sleep(0.05)
        assert set(seen) == {"queue", "database"}
        assert seen["queue"] >= 0.3 and seen["database"] >= 0.3
        while time.monotonic() < deadline and psutil.Process(database.pid).children():
            time.sleep(0.05)
        assert not psutil.Process(database.pid).children()
        assert sampler.cpu()["database"] >= 0.6  # the exited child's whole burn, reaped by its parent
    finally:
        for p in (database, service):
            p.kill()
            p.wait()


def test_a_sweep_point_is_its_counts_run_of_median_pods_per_second() -> None:
    runs = [{"pods_per_second": pods, "cpu_ms_per_pod": {"total": cpu}, "queue_ms": cpu / 3}
            for pods, cpu in [(2_600.0, 0.60), (2_200.0, 0.70), (2_500.0, 0.65), (2_700.0, 0.62)]]
    point = median_run(runs)
    assert point["pods_per_second"] == 2_500.0 and point["queue_ms"] == 0.65 / 3  # one run, whole
    assert point["rounds_pods_per_second"] == [2_600.0, 2_200.0, 2_500.0, 2_700.0]
    assert point["rounds_cpu_ms_per_pod"] == [0.60, 0.70, 0.65, 0.62]
    assert median_run(runs[:3])["pods_per_second"] == 2_500.0


def test_a_paired_step_compares_runs_of_one_round() -> None:
    # Round 3 ran on a slow spell: both counts fell. Medians of the counts (2,500 against 2,600)
    # read 0.96; paired round by round the second count is 10% faster each time.
    one = [{"pods_per_second": p} for p in (2_500.0, 2_600.0, 1_800.0)]
    two = [{"pods_per_second": p} for p in (2_750.0, 2_860.0, 1_980.0)]
    steps = paired_steps(one, two)
    assert [round(s, 6) for s in steps] == [1.1, 1.1, 1.1] and round(median(steps) or 0, 6) == 1.1
    assert paired_steps([{"pods_per_second": 0.0}], [{"pods_per_second": 5.0}]) == [], "no run to compare with"
    assert median([]) is None and median([3.0, 1.0]) == 2.0 and median([3.0, 1.0, 2.0]) == 2.0


def test_the_median_paired_step_lies_between_order_statistics() -> None:
    # The chance that the k-th smallest of n lies above the median is that of fewer than k heads
    # in n fair coin tosses: with eight pairs, one head or none is 9/256 each side.
    eight = [1.29, 0.92, 0.95, 0.93, 0.98, 0.99, 0.82, 0.89]
    assert median_interval(eight) == (0.89, 0.99, 1 - 2 * 9 / 256)
    assert median_interval([1.0, 3.0, 2.0]) == (1.0, 3.0, 0.75), "too few for 90%: the widest"
    assert median_interval([5.0, 1.0, 4.0, 2.0, 3.0]) == (1.0, 5.0, 1 - 2 / 32)
    twenty = [float(v) for v in range(1, 21)]
    low, high, confidence = median_interval(twenty) or (0.0, 0.0, 0.0)
    assert (low, high) == (6.0, 15.0) and 0.95 < confidence < 0.96  # the next narrower is below 90%
    assert median_interval([]) is None and median_interval([2.0]) == (2.0, 2.0, 0.0)


def test_a_step_paired_in_fewer_than_two_rounds_has_no_interval() -> None:
    assert paired_interval([]) is None and paired_interval([1.02]) is None
    assert paired_interval([1.02, 0.98]) == {"low": 0.98, "high": 1.02, "confidence": 0.5}
    many = paired_interval([1 + i / 10_000 for i in range(2_000)])  # no float underflow on the way
    assert many is not None and 0.9 <= many["confidence"] < 0.95


def test_the_sweep_footnote_reads_a_range_only_where_it_is_sure() -> None:
    assert "at 90% or more, a range wholly below 0.95: the step lost pods/s" in _sweep_footnote(True)
    assert "paired range" not in _sweep_footnote(False)


def _runs(workers: int, pods_per_second: list[float]) -> list[dict[str, Any]]:
    return [{"filter_workers": workers, "queues": 1, "propose": "no", "proposed_share": 0.0, "pods_per_second": r,
             "e2e_latency_p99_ms": 900.0, "cpu_ms_per_pod": {"queue": 0.2, "total": 0.5}, "queue_busy": 0.6,
             "queue_waited": 0.05, "sent_per_pod": 1.0} for r in pods_per_second]


SWEPT = {1: _runs(1, [3_000.0, 3_100.0, 2_900.0]), 2: _runs(2, [3_050.0, 2_900.0, 3_000.0]),
         4: _runs(4, [2_700.0, 3_000.0, 2_800.0])}


def test_a_sweep_pairs_each_step_round_by_round() -> None:
    one, two, four = sweep_points(SWEPT)
    assert (one["step"], one["paired_steps"], one["paired_interval"]) == (None, [], None)
    assert two["pods_per_second"] == 3_000.0 and two["step"] == 3_000.0 / 3_000.0
    assert two["paired_steps"] == [3_050 / 3_000, 2_900 / 3_100, 3_000 / 2_900]
    assert four["paired_interval"] == {"low": 2_700 / 3_050, "high": 3_000 / 2_900, "confidence": 0.75}
    table = _sweep_table([one, two, four], rounds=3)
    assert "paired range" in table[1] and table[-1] == _sweep_footnote(True)
    assert "0.89-1.03 75%" in table[4]  # four against two: 2,700/3,050 to 3,000/2,900


def _png_width(path: Path) -> int:
    return int.from_bytes(path.read_bytes()[16:20], "big")  # the IHDR chunk's width


def test_a_sweep_of_rounds_draws_its_steps_paired_beside_the_curve(tmp_path: Path) -> None:
    points = sweep_points(SWEPT)
    paired = plot_sweep(points, "three rounds", tmp_path / "rounds.png", rounds=3)
    # A sweep's JSON from before the paired ranges: the plot finds them from the ratios.
    older = [{k: v for k, v in p.items() if k != "paired_interval"} for p in points]
    assert plot_sweep(older, "three rounds", tmp_path / "older.png", rounds=3) is not None
    single = sweep_points({k: runs[:1] for k, runs in SWEPT.items()})
    assert [p["paired_interval"] for p in single] == [None] * 3  # one pair says nothing of a median
    one_round = plot_sweep(single, "one round", tmp_path / "one.png", rounds=1)
    assert paired is not None and one_round is not None
    # Three panels (the curve, CPU per pod, the paired steps) against two.
    assert _png_width(paired) > _png_width(one_round) * 1.3


@pytest.mark.parametrize(("argv", "says"), [
    (["--rounds", "0", "--scale-sweep", "1,2"], "--rounds: expected a whole number of at least 1, got '0'"),
    (["--rounds", "3"], "--rounds repeats a --scale-sweep"),
])
def test_rounds_are_positive_and_repeat_a_sweep(argv: list[str], says: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(["bench", "--nodes", "4", "--pods", "4", *argv])
    except SystemExit as exit_:
        code = exit_.code  # type: ignore[assignment]  # argparse exits with 2
    assert code == 2 and says in capsys.readouterr().err
