"""The cluster bench's warm-up waits for the filter workers the measured pods will use: those of
the queues that own any of them, at most as many per queue as the queue keeps busy. A workload
whose every pod spans nodes is the first queue's, so it waits for that queue's workers alone
(waiting for the others ran the warm-up to its limit and warned)."""

from __future__ import annotations

import pytest

from berth.bench.cluster import _Probes, _warm_workers, first_owned, idle_queues_note, queue_rule
from berth.services import UpOptions
from shared.workloads import generate


@pytest.mark.parametrize(("workload", "workers", "queues", "most", "busy"), [
    ("SchedulingBasic", 1, 1, 0, 1),
    ("SchedulingBasic", 8, 4, 0, 8),
    ("SchedulingBasic", 8, 4, 1, 4),
    ("SchedulingBasic", 8, 1, 3, 3),
    ("TopologySpreading", 4, 4, 0, 1),
    ("TopologySpreading", 8, 4, 0, 2),
    ("TopologySpreading", 8, 1, 0, 8),
])
def test_the_workers_of_the_queues_that_own_measured_pods(workload: str, workers: int, queues: int, most: int,
                                                          busy: int) -> None:
    options = UpOptions(filter_workers=workers, queues=queues)
    w = generate(workload, 200, 400)
    assert _warm_workers(options, set(first_owned(queue_rule(options, w), w)), most) == busy


def test_queues_that_own_no_measured_pod_are_named() -> None:
    options = UpOptions(filter_workers=8, queues=4)
    basic, spread = generate("SchedulingBasic", 200, 400), generate("TopologySpreading", 200, 400)
    assert idle_queues_note(options, set(first_owned(queue_rule(options, basic), basic))) == ""
    assert idle_queues_note(options, set(first_owned(queue_rule(options, spread), spread))) == (
        "note: 1 of 4 queues owns the measured pods (pods whose constraints span nodes are the first queue's), "
        "so 2 of 8 filter workers filter them; --queues 1 gives them all 8")


def test_probes_go_to_the_queues_that_own_measured_pods_in_turn() -> None:
    options = UpOptions(filter_workers=8, queues=4)
    w = generate("SchedulingBasic", 200, 400)
    queue_of = queue_rule(options, w)
    probes = _Probes({1: w.cluster.pods[-1], 3: w.cluster.pods[-1]}, queue_of)
    made = [probes.next() for _ in range(6)]
    assert [queue_of(p) for p in made] == [1, 3, 1, 3, 1, 3]
    assert len({p.metadata.uid for p in made}) == 6
