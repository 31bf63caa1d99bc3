"""The cluster bench's warm-up waits for the filter workers the measured pods will use: those of
the queues that own any of them, at most as many per queue as the queue keeps busy. A workload
whose every pod spans nodes is the first queue's, so it waits for that queue's workers alone
(waiting for the others ran the warm-up to its limit and warned). The others it waits for until they
rest, as they do in a cluster that has run a few seconds."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from berth.bench import cluster
from berth.bench.cluster import _Probes, _warm_workers, first_owned, idle_queues_note, queue_rule
from berth.bench.fleet_metrics import WorkersState, workers_state
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


ANSWERED = 'berth_events_published_total{service="filter",topic="berth.shard-results"} 3.0\n'
NOT_ANSWERED = 'berth_events_published_total{service="filter",topic="berth.shard-results"} 0.0\n'
RESTED = 'berth_rests_total{service="filter"} 2.0\n'
NOT_RESTED = 'berth_rests_total{service="filter"} 0.0\n'


def test_the_warm_up_settles_once_every_worker_answers_or_rests() -> None:
    state = workers_state([ANSWERED + NOT_RESTED, NOT_ANSWERED + RESTED, NOT_ANSWERED + NOT_RESTED, ""])
    assert (state.answering, state.idle, state.unread, state.workers, state.settled) == (1, 1, 1, 4, False)
    assert state.unsettled(1) == ("1 of the 4 filter workers answered, 1 of the 3 others rested, "
                                  "the metrics of 1 could not be read")
    assert state.unsettled(2) == ("1 of the 2 filter workers to be kept busy answered, 1 of the 3 others rested, "
                                  "the metrics of 1 could not be read")
    state = workers_state([ANSWERED + RESTED, NOT_ANSWERED + RESTED, RESTED])
    assert (state.answering, state.idle, state.unread, state.settled) == (1, 2, 0, True)


def _states(*states: WorkersState) -> Callable[[object], WorkersState]:
    """The warm-up's reads of the workers' metrics, one state each, the last one thereafter."""
    left = list(states)
    return lambda fleet: left.pop(0) if len(left) > 1 else left[0]


async def test_the_warm_up_waits_for_the_spares_to_rest(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(cluster, "WARMUP_POLL_S", 0.01)
    monkeypatch.setattr(cluster, "WARMUP_PROBE_S", 100.0)  # no probe: the fakes below cannot send one
    starting, answered, settled = WorkersState(0, 0, 0, 3), WorkersState(1, 1, 0, 3), WorkersState(1, 2, 0, 3)
    reads = _states(starting, answered, answered, settled)
    monkeypatch.setattr(cluster, "workers_state_of", reads)
    await cluster._warm_up(None, None, None, None, None, 10.0, busy=1)  # type: ignore[arg-type]  # unused fakes
    assert reads(None) == settled and capsys.readouterr().err == ""


async def test_the_warm_up_says_what_it_waited_for_in_vain(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(cluster, "WARMUP_POLL_S", 0.01)
    monkeypatch.setattr(cluster, "WARMUP_PROBE_S", 100.0)
    monkeypatch.setattr(cluster, "WARMUP_S", 0.05)
    monkeypatch.setattr(cluster, "workers_state_of", _states(WorkersState(1, 1, 1, 3)))
    await cluster._warm_up(None, None, None, None, None, 10.0, busy=1)  # type: ignore[arg-type]  # unused fakes
    assert capsys.readouterr().err == ("warning: 1 of the 3 filter workers answered, 1 of the 2 others rested, "
                                       "the metrics of 1 could not be read in the warm-up; measuring anyway\n")
