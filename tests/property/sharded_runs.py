"""The simulator driven by the sharded attempt, as the filter workers and the queue run it, and
its report without what the way of scheduling changes: what the equivalence tests compare."""

from __future__ import annotations

import msgspec

from shared.events import PodShardResult
from shared.events.partitioning import partition_for
from shared.framework.cycle_state import CycleState
from shared.framework.pod_info import PodInfo
from shared.framework.runtime import Framework
from shared.framework.snapshot import Snapshot
from shared.framework.status import Code, Status
from shared.indexes.node_index import NodeIndexes
from shared.model.loader import load_objects
from shared.protocol.answers import decode_all, decode_walk, walks
from shared.protocol.merge_batch import merge_batch
from shared.protocol.sharded import filter_on_shard, finish_scores, merge_filter, raw_by_plugin, raw_scores_on_shard
from shared.scheduler.fit_error import FitError, NoNodesAvailable
from shared.scheduler.schedule_one import ScheduleAlgorithm, ScheduleResult, SchedulingError
from shared.simulation.simulator import Simulator


class LocalShards(ScheduleAlgorithm):
    """`ScheduleAlgorithm` with its walk done by `shards` shards, each with its own CycleState."""

    def __init__(self, base: ScheduleAlgorithm, shards: int, indexed: bool = False, packed: bool = False) -> None:
        super().__init__(base.rng)
        self.shards = shards
        self.packed = packed
        # As each filter worker keeps its own: one set of node indexes per shard.
        self.node_indexes = [NodeIndexes() if indexed else None for _ in range(shards)]

    def schedule_pod(self, fwk: Framework, state: CycleState, pod: PodInfo, snapshot: Snapshot) -> ScheduleResult:
        if snapshot.num_nodes() == 0:
            raise NoNodesAvailable()
        members = [{n for n in snapshot.node_info_map if partition_for(n, self.shards) == k}
                   for k in range(self.shards)]
        states = [CycleState() for _ in members]
        results = [filter_on_shard(fwk, s, pod, snapshot, self.next_start_node_index, m, x, packed=self.packed)
                   for s, m, x in zip(states, members, self.node_indexes)]
        raw = None
        if self.packed:  # over the wire, decoded and merged as the queue does
            answers = decode_all(msgspec.msgpack.decode(msgspec.msgpack.encode(r), type=PodShardResult)
                                 for r in results)
            batch = merge_batch([(fwk, pod)], {pod.uid: answers}, snapshot, self.next_start_node_index)
            merged = batch.merged[0]
            raw = None if batch.to_score else batch.raw.get(pod.uid)
            walked = [w.named(snapshot.names) for w in walks(answers)]
        else:
            start, whole = self.next_start_node_index, len(results) == 1
            walked = [decode_walk(r) for r in results]
            merged = merge_filter(fwk, pod, snapshot, start, walked, on_snapshot=whole)
        fwk.run_pre_filter_plugins(state, pod)  # what the preemption service computes for itself
        if merged.error:
            raise SchedulingError(Status(Code.ERROR, merged.error))
        if merged.advance:
            self.next_start_node_index = (self.next_start_node_index + merged.processed) % snapshot.num_nodes()
        feasible = merged.feasible
        if not feasible:
            raise FitError(pod.key, snapshot.num_nodes(), merged.diagnosis)
        if len(feasible) == 1:
            return ScheduleResult(feasible[0], 0, 1, [], merged.diagnosis)
        if raw is None:
            if not all(w.scored or not w.feasible for w in walked):  # PreScore reads the feasible set
                walked = [decode_walk(raw_scores_on_shard(fwk, s, pod, snapshot, feasible, m))
                          for s, m in zip(states, members)]
            raw, error = raw_by_plugin(walked)
            assert not error
        scores, error = finish_scores(fwk, CycleState(), pod, snapshot, feasible, raw)
        assert not error
        return ScheduleResult(self.select_host(scores), 0, len(feasible), scores, merged.diagnosis)


def rendered(sim: Simulator) -> bytes:
    """The run's report without what the way of scheduling changes (cycles, attempts)."""
    report = msgspec.to_builtins(sim.run())
    report.pop("cycles", None)
    for pod in report["pods"]:
        pod.pop("attempts", None)
    return msgspec.json.encode(report)


def report(docs: list[dict], seed: int, shards: int | None, indexed: bool = False, packed: bool = False) -> bytes:
    sim = Simulator(load_objects(("generated", d) for d in docs), seed=seed)
    if shards is not None:
        sim.algorithm = LocalShards(sim.algorithm, shards, indexed, packed)
    return rendered(sim)
