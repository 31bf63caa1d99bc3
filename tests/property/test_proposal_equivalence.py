"""Proposals change no decision: a filter worker deciding a batch (`propose_batch`) decides it as
the queue would on the same view, and in lockstep (one pod a batch, workers in turn) the run is
the in-process run byte for byte."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared.cluster import ClusterView, point_at
from shared.events import NodeUpserted, PodShardResult, PodSubmitted
from shared.framework.cycle_state import CycleState
from shared.framework.pod_info import PodInfo
from shared.framework.runtime import Framework
from shared.framework.snapshot import Snapshot
from shared.framework.status import Code, Status
from shared.model.loader import load_objects
from shared.profiles import build_profiles
from shared.protocol.answers import Answer, decode, decode_all, decode_walk
from shared.protocol.batch import BatchItem, decide_batch
from shared.protocol.merge_batch import merge_batch
from shared.protocol.proposing import propose_batch
from shared.protocol.sharded import filter_on_shard
from shared.scheduler.fit_error import FitError, NoNodesAvailable
from shared.scheduler.schedule_one import ScheduleAlgorithm, ScheduleResult, SchedulingError
from shared.scheduler.seeds import attempt_seed
from shared.simulation.simulator import Simulator

from .clusters import clusters, large_clusters
from .sharded_runs import rendered, report


class ProposingWorkers(ScheduleAlgorithm):
    """`ScheduleAlgorithm` with each attempt proposed by one of `workers` filter workers in turn
    (a batch of one, each worker with its own walker and node indexes), the answer sent over the
    wire and merged and decided as the queue decides it: the ranking's first node, or the failed
    walk's diagnosis."""

    def __init__(self, sim: Simulator, workers: int) -> None:
        super().__init__(sim.algorithm.rng)
        self.sim = sim
        self.walkers = [ScheduleAlgorithm(random.Random(0)) for _ in range(workers)]
        self.turn = 0

    def schedule_pod(self, fwk: Framework, state: CycleState, pod: PodInfo, snapshot: Snapshot) -> ScheduleResult:
        if snapshot.num_nodes() == 0:
            raise NoNodesAvailable()
        walker = self.walkers[self.turn % len(self.walkers)]
        self.turn += 1
        seed = attempt_seed(self.sim.seed, pod.key, self.sim.records[pod.uid].attempts)
        start = self.next_start_node_index
        [proposal] = propose_batch({pod.pod.spec.scheduler_name: fwk}, [pod.pod], [seed], start,
                                   lambda: snapshot, _no_placing, walker)
        answer = msgspec.msgpack.decode(msgspec.msgpack.encode(proposal.result), type=PodShardResult)
        merged = merge_batch([(fwk, pod)], {pod.uid: [decode(answer)]}, snapshot, start).merged[0]
        fwk.run_pre_filter_plugins(state, pod)  # what the preemption service computes for itself
        if merged.error:
            raise SchedulingError(Status(Code.ERROR, merged.error))
        if merged.advance:
            self.next_start_node_index = (start + merged.processed) % snapshot.num_nodes()
        if not merged.feasible:
            raise FitError(pod.key, snapshot.num_nodes(), merged.diagnosis)
        assert merged.ranked
        return ScheduleResult(merged.feasible[0], 0, 1, [], merged.diagnosis)


def _no_placing(uid: str, node: str) -> None:
    """The simulator places the pod itself once it is decided."""


def _proposing_report(docs: list[dict], seed: int, workers: int) -> bytes:
    sim = Simulator(load_objects(("generated", d) for d in docs), seed=seed)
    sim.algorithm = ProposingWorkers(sim, workers)
    return rendered(sim)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=clusters(), seed=st.integers(0, 5), workers=st.sampled_from([1, 2, 3, 8]))
def test_proposals_in_lockstep_on_any_number_of_workers_change_no_outcome(
        docs: list[dict], seed: int, workers: int) -> None:
    assert _proposing_report(docs, seed, workers) == report(docs, seed, None)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(docs=large_clusters(), seed=st.integers(0, 3), workers=st.sampled_from([1, 2, 3, 8]))
def test_proposals_over_node_indexes_change_no_outcome(docs: list[dict], seed: int, workers: int) -> None:
    """Above 100 nodes: partial, rotating walks; preemption; nominations; spread constraints."""
    assert _proposing_report(docs, seed, workers) == report(docs, seed, None)


def _view(docs: list[dict]) -> tuple[ClusterView, list[PodInfo]]:
    cluster = load_objects(("generated", d) for d in docs)
    view = ClusterView()
    now = datetime.now(UTC)
    for node in cluster.nodes:
        view.apply_payload(NodeUpserted(node=node), now)
    for i, pod in enumerate(cluster.pods):
        view.apply_payload(PodSubmitted(pod=msgspec.structs.replace(
            pod, metadata=msgspec.structs.replace(pod.metadata, uid=pod.metadata.uid or f"uid-{i}"))), now)
    pending = [PodInfo(p) for uid, p in view.specs.items() if view.node_of(uid) is None]
    return view, pending


def _decided(view: ClusterView, profiles: dict[str, Framework], pending: list[PodInfo], seeds: list[int],
             start: int, answers: dict[str, list[Answer]]) -> list[tuple[str, str, str]]:
    """The queue's decisions of a batch from its answers, on `view` (left as it was)."""
    fwk = profiles[next(iter(profiles))]
    snapshot = view.snapshot()
    merged = merge_batch([(fwk, p) for p in pending], answers, snapshot, start)
    items = [BatchItem(fwk, p, m, merged.raw.get(p.uid, {}), seed, start=start)
             for p, m, seed in zip(pending, merged.merged, seeds)]

    def assume(uid: str, node: str) -> None:
        view.assume(uid, node)
        point_at(profiles.values(), view)

    decisions = decide_batch(items, view.snapshot, assume, walker=ScheduleAlgorithm(random.Random(0)),
                             may_walk=lambda _: True)
    view.set_assumed([])
    point_at(profiles.values(), view)
    return [(d.verdict, d.host, d.fit.message() if d.fit else d.error) for d in decisions]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(docs=large_clusters(), seed=st.integers(0, 1000), start=st.integers(0, 500))
def test_the_queue_decides_a_proposed_batch_as_it_decides_the_walks(docs: list[dict], seed: int, start: int) -> None:
    """On the view the worker proposed on, the queue's decisions from the proposals (over the wire,
    a failed walk that pods share sent once) are its decisions from the walks themselves: the
    worker decided the batch as the queue would have."""
    view, pending = _view(docs)
    profiles = build_profiles(None)
    point_at(profiles.values(), view)
    fwk = profiles[next(iter(profiles))]
    start %= max(view.snapshot().num_nodes(), 1)  # the queue's round-robin start is always a position
    seeds = [seed + i for i in range(len(pending))]
    snapshot = view.snapshot()
    walks: dict[str, list[Answer]] = {
        p.uid: [decode_walk(filter_on_shard(fwk, CycleState(), p, snapshot, start, snapshot.node_info_map,
                                            packed=True, stop_at_nominated=True, whole=True))] for p in pending}
    from_walks = _decided(view, profiles, pending, seeds, start, walks)

    def assume(uid: str, node: str) -> None:
        view.assume(uid, node)
        point_at(profiles.values(), view)

    proposals = propose_batch(profiles, [p.pod for p in pending], seeds, start, view.snapshot, assume,
                              ScheduleAlgorithm(random.Random(0)))
    view.set_assumed([])
    point_at(profiles.values(), view)
    sent = msgspec.msgpack.decode(msgspec.msgpack.encode([p.result for p in proposals]), type=list[PodShardResult])
    answers = {r.pod_uid: [decoded] for r, decoded in zip(sent, decode_all(sent))}
    assert _decided(view, profiles, pending, seeds, start, answers) == from_walks
    # Each pod the worker placed leads its ranking with that node (a ranking offered for a pod it
    # could not place any more is judged on the queue's view, which here agrees).
    for (verdict, host, _), p in zip(from_walks, proposals):
        if verdict == "bind":
            assert p.result.ranked[0] == host
