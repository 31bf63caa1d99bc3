"""The PreemptionAsync workload, modelled on upstream's: nodes 3.6 of 4 CPUs full of low-priority
pods, plain 100m pods measured while high-priority pods that need three evictions each arrive on a
timer; the in-process bench submits them while the measured pods are scheduled."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from berth.bench import inprocess
from berth.bench.inprocess import run_inprocess
from shared.model import Pod
from shared.simulation.simulator import Simulator
from shared.workloads import generate


def test_the_workload_has_upstreams_shape() -> None:
    w = generate("PreemptionAsync", 6, 40)
    low = w.cluster.pods[:-w.measured]
    assert Counter(p.spec.node_name for p in low) == {f"node-{i}": 4 for i in range(6)}
    assert {(p.spec.priority, p.spec.containers[0].resources.requests["cpu"]) for p in low} == {(0, "900m")}
    measured = w.cluster.pods[-w.measured:]
    assert w.measured == 40 and {p.spec.containers[0].resources.requests["cpu"] for p in measured} == {"100m"}
    assert len(w.churn) == 10 and w.churn_interval_s == 0.2
    assert {(p.spec.priority, p.spec.containers[0].resources.requests["cpu"]) for p in w.churn} == {(10, "3")}


def test_each_preemptor_evicts_three_pods_of_its_node() -> None:
    w = generate("PreemptionAsync", 6, 0)
    sim = Simulator(dataclasses.replace(w.cluster, pods=[*w.cluster.pods, *w.churn[:3]]))
    report = sim.run()
    by_name = {p.name: p for p in report.pods}
    for i in range(3):
        assert by_name[f"preemptor-{i}"].phase == "Bound"
    evicted = [p for p in report.pods if p.name.startswith("low-") and p.phase != "Bound"]
    assert len(evicted) == 9


def test_the_inprocess_bench_submits_the_churn_on_the_clock_while_it_measures(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """On a clock that moves 1/16 s a reading: the k-th churn pod goes in at the first attempt k
    intervals after the start, in order, and none once the measured pods are all bound."""
    now = [0.0]
    step = 1 / 16  # exact in binary, as the interval below: no rounding at the boundaries

    def ticking() -> float:
        now[0] += step
        return now[0]

    submitted: list[tuple[str, float]] = []
    real = Simulator.submit

    def recording(self: Simulator, pod: Pod) -> None:
        submitted.append((pod.metadata.name, now[0]))
        real(self, pod)

    monkeypatch.setattr(inprocess.time, "perf_counter", ticking)
    monkeypatch.setattr(Simulator, "submit", recording)
    w = dataclasses.replace(generate("PreemptionAsync", 30, 24), churn_interval_s=0.25)
    result = run_inprocess(w, seed=0, progress=False)
    assert result.problems == [] and result.bound == 24
    assert [name for name, _ in submitted] == [p.metadata.name for p in w.churn[:len(submitted)]]
    start = step  # the clock's first reading
    for k, (_, at) in enumerate(submitted, start=1):
        assert start + k * w.churn_interval_s <= at < start + k * w.churn_interval_s + step
    assert result.churn_submitted == len(submitted) and 0 < len(submitted) < len(w.churn)


def test_no_churn_is_due_when_the_measured_pods_are_bound_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Simulator, "submit", lambda self, pod: pytest.fail("submitted after the measurement"))
    result = run_inprocess(generate("PreemptionAsync", 30, 40), seed=0, progress=False)  # done in milliseconds
    assert result.churn_submitted == 0 and result.bound == 40
