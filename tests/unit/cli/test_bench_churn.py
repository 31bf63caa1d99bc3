"""The PreemptionAsync workload, modelled on upstream's: nodes 3.6 of 4 CPUs full of low-priority
pods, plain 100m pods measured while high-priority pods that need three evictions each arrive on a
timer; the in-process bench submits them while the measured pods are scheduled."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from berth.bench.inprocess import run_inprocess
from shared.scheduler.simulator import Simulator
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


def test_the_inprocess_bench_submits_the_churn_while_it_measures(monkeypatch: pytest.MonkeyPatch) -> None:
    w = dataclasses.replace(generate("PreemptionAsync", 30, 60), churn_interval_s=1e-9)  # all due at once
    submitted: list[str] = []
    real = Simulator.submit

    def counting(self: Simulator, pod: object) -> None:
        submitted.append(pod.metadata.name)  # type: ignore[attr-defined]
        real(self, pod)  # type: ignore[arg-type]

    monkeypatch.setattr(Simulator, "submit", counting)
    result = run_inprocess(w, seed=0, progress=False)
    assert result.problems == [] and result.bound == 60
    assert submitted and submitted == [p.metadata.name for p in w.churn[:len(submitted)]]
