"""The filter worker's handler: FilterBatchRequested copies for its shards in, ShardFiltered out.

The replica holds the whole cluster view (`LogFollower`), so PreFilter's counts are exact; it
filters and scores only the nodes of the shards whose request copies it received. Copies of one
batch fetched together are evaluated as one walk over the union of their shards (one PreFilter per
pod) and answered once, naming every shard covered: any set of nodes can stand for a shard in the
queue's merge, as long as the answer covers exactly that set.

A proposing request (`propose`) is also decided here, as the queue would decide it on the same
view (shared.protocol.proposing), and answered with a ranking per pod.

Before evaluating, the view must have folded what the queue had when it sent the request (the
request's watermark), and the queue's in-flight assumptions are overlaid, so the replica sees the
queue's view. Output ids derive from the request, so a redelivered request is answered with the same
event ids (the queue drops duplicates).
"""

from __future__ import annotations

import logging
import random
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from services.runtime import Handler
from shared.cluster import ClusterView, point_at
from shared.events import (
    FILTER_REQUESTS,
    NODE_SHARDS,
    SHARD_RESULTS,
    FilterBatchRequested,
    OutgoingEvent,
    PodShardResult,
    ReceivedEvent,
    ShardFiltered,
    derived_id,
    envelope,
)
from shared.events.partitioning import partition_for
from shared.framework.cycle_state import CycleState
from shared.framework.pod_info import PodInfo
from shared.framework.runtime import Framework
from shared.framework.snapshot import Snapshot
from shared.indexes.node_index import NodeIndexes
from shared.model import Pod
from shared.protocol.proposing import propose_on_view
from shared.protocol.same_answers import answer_key, same_as
from shared.protocol.sharded import filter_on_shard, raw_scores_on_shard
from shared.scheduler.schedule_one import ScheduleAlgorithm

from .settings import DEFAULT_WATERMARK_WAIT_S

log = logging.getLogger(__name__)
KEPT_BATCHES = 8


class ShardIndex:
    """Node name → shard, for the current snapshot's nodes."""

    def __init__(self) -> None:
        self._snapshot: Snapshot | None = None
        self._by_shard: dict[int, set[str]] = {}

    def nodes_of(self, snapshot: Snapshot, shards: Sequence[int]) -> set[str]:
        if snapshot is not self._snapshot:
            self._by_shard = {}
            for name in snapshot.node_info_map:
                self._by_shard.setdefault(partition_for(name, NODE_SHARDS), set()).add(name)
            self._snapshot = snapshot
        out: set[str] = set()
        for k in shards:
            out |= self._by_shard.get(k, set())
        return out


class FilterHandler(Handler):
    def __init__(self, view: ClusterView, profiles: Mapping[str, Framework],
                 wait_reached: Callable[[Mapping[str, list[int]], float], Awaitable[bool]],
                 *, producer: str = "filter", watermark_wait_s: float = DEFAULT_WATERMARK_WAIT_S) -> None:
        self.view, self.profiles = view, profiles
        self.wait_reached = wait_reached
        self.producer = producer
        self.watermark_wait_s = watermark_wait_s
        self.index = ShardIndex()
        self.node_indexes = NodeIndexes()
        self.walker = ScheduleAlgorithm(random.Random(0))
        """Walks again, in a proposed batch, for a pod the ones before it left no candidate."""
        self.owned: set[int] = set(range(NODE_SHARDS))
        self._states: OrderedDict[str, dict[str, _PodState]] = OrderedDict()
        self.evaluated = 0
        """Pod × shard-set evaluations so far, references to an identical pod's answer not counted."""
        for fwk in profiles.values():
            fwk.set_snapshot(view.snapshot())

    async def on_assigned(self, partitions: Sequence[tuple[str, int]]) -> None:
        self.owned = {p for t, p in partitions if t == FILTER_REQUESTS}

    async def handle_batch(self, events: Sequence[ReceivedEvent]) -> Sequence[OutgoingEvent]:
        groups: dict[tuple[object, str], tuple[ReceivedEvent, list[int]]] = {}
        for event in events:
            payload = event.payload
            if not isinstance(payload, FilterBatchRequested):
                log.warning("filter: ignoring %s", event.envelope.type)
                continue
            key = (event.envelope.event_id, payload.phase)
            first, shards = groups.setdefault(key, (event, []))
            shards.extend(range(NODE_SHARDS) if payload.whole else [event.position.partition])
        out: list[OutgoingEvent] = []
        for first, shards in groups.values():
            out.append(await self._answer(first, sorted(set(shards))))
        return out

    async def _answer(self, event: ReceivedEvent, shards: list[int]) -> OutgoingEvent:
        req = event.payload
        assert isinstance(req, FilterBatchRequested)
        reached = await self.wait_reached(req.watermark, self.watermark_wait_s)
        if not reached and req.pods:  # an empty request only primes this worker's view
            log.warning("filter: batch %s evaluated before the view reached the queue's", req.batch_id)
        folded = self.view.off(req.watermark)  # past it, or short of it (the wait ran out)
        self.view.set_assumed((a.pod_uid, a.node_name) for a in req.assumed)
        point_at(self.profiles.values(), self.view)
        snapshot = self.view.snapshot()
        # A whole batch walks every node: the snapshot's own map stands for them (the node index
        # keeps the mask of the collection it was last asked about).
        mine = snapshot.node_info_map if req.whole else self.index.nodes_of(snapshot, shards)
        # Positions mean the same to the queue only in the view at its watermark.
        packed = reached and not folded
        # Proposals are made on the queue's view only: on another the queue ranks for itself.
        proposed = req.propose and req.whole and req.phase == "filter" and packed
        results: list[PodShardResult] | None = None
        if proposed:
            try:
                results = self._propose(req)
            except Exception:
                # The walks answer instead, each pod's failure its own (`_evaluate_all`).
                log.exception("filter: proposing batch %s failed; answering with the walks", req.batch_id)
                proposed = False
        if results is None:
            results = self._evaluate_all(req, snapshot, mine, packed)
        answer = ShardFiltered(batch_id=req.batch_id, cycle=req.cycle, shard=shards[0], shards=shards,
                               phase=req.phase, node_count=len(mine), results=results, folded=folded,
                               owned=sorted(self.owned), proposed=proposed)
        env = envelope(answer, producer=self.producer, caused_by=event.envelope,
                       event_id=derived_id(event.envelope.event_id, "shards", *shards))
        return OutgoingEvent(SHARD_RESULTS, env, partition=req.answer_partition)

    def _propose(self, req: FilterBatchRequested) -> list[PodShardResult]:
        """The batch decided on the view as the queue would decide it."""
        proposals = propose_on_view(req, self.view, self.profiles, self.walker, indexes=self.node_indexes)
        self.evaluated += len(proposals)
        return [p.result for p in proposals]

    def _evaluate_all(self, req: FilterBatchRequested, snapshot: Snapshot, mine: Collection[str],
                      packed: bool) -> list[PodShardResult]:
        """Every pod's answer; in the filter phase a pod only its name tells apart from one
        answered before it gets a reference to that answer."""
        results: list[PodShardResult] = []
        first: dict[bytes, str] = {}
        for i, pod in enumerate(req.pods):
            try:
                key = None
                if req.phase == "filter":
                    start = req.starts[i] if i < len(req.starts) else 0
                    uid = pod.metadata.uid
                    key = answer_key(pod, start, self._entry(req.batch_id, pod).info.signature(),
                                     nominated=self.view.holds_nomination(uid))
                    if key is not None and key in first:
                        results.append(same_as(uid, first[key]))
                        continue
                results.append(self._evaluate(req, i, snapshot, mine, packed))
            except Exception as exc:
                # The pod's attempt ends in an error (the queue backs it off); the batch's other pods
                # are answered: a request without an answer would be sent again, and fail again.
                log.exception("filter: evaluating pod %s of batch %s failed", pod.metadata.uid, req.batch_id)
                results.append(PodShardResult(pod_uid=pod.metadata.uid,
                                              error=f"evaluating the pod failed: {type(exc).__name__}: {exc}"))
                continue
            self.evaluated += 1
            if key is not None:
                first[key] = pod.metadata.uid
        return results

    def _evaluate(self, req: FilterBatchRequested, i: int, snapshot: Snapshot, mine: Collection[str],
                  packed: bool) -> PodShardResult:
        pod = req.pods[i]
        uid = pod.metadata.uid
        fwk = self.profiles.get(pod.spec.scheduler_name)
        if fwk is None:
            return PodShardResult(pod_uid=uid, error=f"no profile serves scheduler {pod.spec.scheduler_name!r}")
        entry = self._entry(req.batch_id, pod)
        if req.phase == "score":
            if not entry.prefiltered:  # a fresh replica (rebalance or restart) between the phases
                fwk.run_pre_filter_plugins(entry.state, entry.info)
            return raw_scores_on_shard(fwk, entry.state, entry.info, snapshot, req.feasible[i], mine)
        start = req.starts[i] if i < len(req.starts) else 0
        # A cycle of its own each time: a batch evaluated again (sent again, or redelivered) on a
        # view that moved must not reuse what PreFilter planned then (which filters run).
        entry.state = CycleState()
        result = filter_on_shard(fwk, entry.state, entry.info, snapshot, start, mine, self.node_indexes,
                                 packed=packed, stop_at_nominated=packed, whole=req.whole)
        entry.prefiltered = True
        return result

    def _entry(self, batch_id: str, pod: Pod) -> _PodState:
        """The pod's CycleState for this batch: PreFilter's state is what the score phase reads."""
        states = self._states.get(batch_id)
        if states is None:
            states = self._states[batch_id] = {}
            while len(self._states) > KEPT_BATCHES:
                self._states.popitem(last=False)
        entry = states.get(pod.metadata.uid)
        if entry is None:
            entry = states[pod.metadata.uid] = _PodState(PodInfo(pod))
        return entry


@dataclass
class _PodState:
    info: PodInfo
    state: CycleState = field(default_factory=CycleState)
    prefiltered: bool = False
