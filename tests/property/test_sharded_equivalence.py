"""Splitting an attempt across node shards changes no decision: the simulator driven by the sharded
filter/merge/score functions (as the filter workers and the queue run them) gives a report
byte-identical to the in-process algorithm's, for any number of shards."""

from __future__ import annotations

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared.events import PodShardResult
from shared.framework.cycle_state import CycleState
from shared.framework.pod_info import PodInfo
from shared.framework.runtime import Framework
from shared.framework.snapshot import Snapshot
from shared.framework.status import Code, Status
from shared.indexes.node_index import NodeIndexes
from shared.model.loader import load_objects
from shared.protocol.answers import decode_walk
from shared.protocol.merge_batch import merge_batch
from shared.protocol.sharded import filter_on_shard, finish_scores
from shared.scheduler.fit_error import FitError, NoNodesAvailable
from shared.scheduler.schedule_one import ScheduleAlgorithm, ScheduleResult, SchedulingError
from shared.simulation.simulator import Simulator

from .clusters import clusters, large_clusters
from .sharded_runs import rendered, report


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=clusters(), seed=st.integers(0, 5), shards=st.sampled_from([1, 2, 3, 8, 16]))
def test_sharding_changes_no_outcome(docs: list[dict], seed: int, shards: int) -> None:
    assert report(docs, seed, shards) == report(docs, seed, None)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=clusters(), seed=st.integers(0, 5), shards=st.sampled_from([1, 2, 3, 8, 16]))
def test_packed_shard_answers_change_no_outcome(docs: list[dict], seed: int, shards: int) -> None:
    """Answers packed as positions and runs (from node names: no index) and unpacked by the queue."""
    assert report(docs, seed, shards, packed=True) == report(docs, seed, None)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(docs=large_clusters(), seed=st.integers(0, 3), shards=st.sampled_from([1, 2, 3, 8, 16]))
def test_shards_reading_node_indexes_change_no_outcome(docs: list[dict], seed: int, shards: int) -> None:
    """Filter workers walk their shard through the node index: clusters above 100 nodes (partial,
    rotating walks; preemption; nominations; spread constraints) give the in-process report,
    whether the answers travel packed straight from the walk's positions (as the workers send
    them) or as names."""
    expected = report(docs, seed, None)
    assert report(docs, seed, shards, indexed=True) == expected
    assert report(docs, seed, shards, indexed=True, packed=True) == expected


def test_percentage_of_nodes_to_score_walk_is_exact() -> None:
    """Above 100 nodes the walk stops early; each shard stopping at the whole attempt's target keeps
    the merged walk identical to the in-process one (start index carried across attempts)."""
    docs: list[dict] = [
        {"kind": "Node", "metadata": {"name": f"n{i:03}", "labels": {"zone": f"z{i % 3}"}},
         "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
        for i in range(260)
    ]
    docs += [{"kind": "Pod", "metadata": {"name": f"p{i}"},
              "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]}}
             for i in range(60)]
    for shards in (1, 4, 16):
        assert report(docs, 3, shards) == report(docs, 3, None)


class RotatingWorkers(ScheduleAlgorithm):
    """`ScheduleAlgorithm` with each attempt walked whole by one of `workers` filter workers in
    turn, as the queue sends whole batches: each worker keeps its own node indexes, so a worker
    that missed the attempts between two of its own walks reads caches the others moved past.
    The answer travels packed, is merged as the queue merges it, and is scored by the worker
    (no score phase: its feasible set is the merged one)."""

    def __init__(self, base: ScheduleAlgorithm, workers: int) -> None:
        super().__init__(base.rng)
        self.indexes = [NodeIndexes() for _ in range(workers)]
        self.turn = 0

    def schedule_pod(self, fwk: Framework, state: CycleState, pod: PodInfo, snapshot: Snapshot) -> ScheduleResult:
        if snapshot.num_nodes() == 0:
            raise NoNodesAvailable()
        indexes = self.indexes[self.turn % len(self.indexes)]
        self.turn += 1
        start = self.next_start_node_index
        answer = filter_on_shard(fwk, CycleState(), pod, snapshot, start, snapshot.node_info_map, indexes,
                                 packed=True, stop_at_nominated=True, whole=True)
        answer = msgspec.msgpack.decode(msgspec.msgpack.encode(answer), type=PodShardResult)
        batch = merge_batch([(fwk, pod)], {pod.uid: [decode_walk(answer)]}, snapshot, start)
        assert not batch.to_score  # a whole walk is scored where it is made
        merged = batch.merged[0]
        fwk.run_pre_filter_plugins(state, pod)  # what the preemption service computes for itself
        if merged.error:
            raise SchedulingError(Status(Code.ERROR, merged.error))
        if merged.advance:
            self.next_start_node_index = (start + merged.processed) % snapshot.num_nodes()
        feasible = merged.feasible
        if not feasible:
            raise FitError(pod.key, snapshot.num_nodes(), merged.diagnosis)
        if len(feasible) == 1:
            return ScheduleResult(feasible[0], 0, 1, [], merged.diagnosis)
        raw = batch.raw[pod.uid]
        scores, error = finish_scores(fwk, CycleState(), pod, snapshot, feasible, raw)
        assert not error and not merged.error
        return ScheduleResult(self.select_host(scores), 0, len(feasible), scores, merged.diagnosis)


def _workers_report(docs: list[dict], seed: int, workers: int) -> bytes:
    sim = Simulator(load_objects(("generated", d) for d in docs), seed=seed)
    sim.algorithm = RotatingWorkers(sim.algorithm, workers)
    return rendered(sim)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=clusters(), seed=st.integers(0, 5), workers=st.sampled_from([1, 2, 3, 8]))
def test_whole_batches_on_any_number_of_workers_change_no_outcome(docs: list[dict], seed: int, workers: int) -> None:
    """Lockstep with 1, 2, 3 or 8 workers: every attempt walked whole by the next worker gives
    the in-process report byte for byte."""
    assert _workers_report(docs, seed, workers) == report(docs, seed, None)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(docs=large_clusters(), seed=st.integers(0, 3), workers=st.sampled_from([1, 2, 3, 8]))
def test_whole_batches_over_node_indexes_change_no_outcome(docs: list[dict], seed: int, workers: int) -> None:
    """Above 100 nodes (partial, rotating walks; preemption; nominations; spread constraints), each
    worker's node index behind the others' attempts."""
    assert _workers_report(docs, seed, workers) == report(docs, seed, None)
