"""The queue's scheduling loop: pop a batch from the core's `SchedulingQueue`, send it to a filter
worker (which walks every node for it), merge, decide in queue order against the assumed ledger,
and publish bind or preemption requests. How cycles follow one another (one pod at a time, or
pipelined) is a driver's (`drivers.py`); how the queue reacts to the cluster is the rules the
simulator follows too (`shared.scheduler.queue_rules`).

- **Assumed ledger.** A decided pod is assumed on its node in the queue's `ClusterView` until its
  PodBound or BindRejected is folded; every request carries those assumptions, so shards count
  pods in flight. Within a batch, a pod whose choice follows an earlier pod's placement is
  re-checked (PreFilter + Filter on the queue's own view) and falls back to its next-best node.
- **Lockstep.** With `lockstep`, one pod is in flight at a time and its outcome is awaited, and the
  queue runs on the simulator's logical clock (1 ms a cycle, jumping over backoff and the
  unschedulable timeout when nothing else can run): decisions then equal `berth simulate`'s.
- **Restart.** The view and the queue are rebuilt from the log: pods with a bind in flight stay
  assumed, pending pods are queued in submission order, attempt counts come from `decisions`.
- **Shares.** Where several queues share the cluster, this one queues only the pods its `share`
  owns, asks its own slice of the workers, and starts its walks on its own arc (`share.py`).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime

from shared.binding.admission import is_admission
from shared.cluster import ClusterView, point_at, with_nomination
from shared.errors import RecordTooLarge
from shared.events import (
    BINDS,
    DECISIONS,
    GATED_TOPICS,
    NODES,
    PLACEMENTS,
    PODS,
    PREEMPTION_REQUESTS,
    TOPICS,
    Assumed,
    BindRejected,
    BindRequested,
    Envelope,
    ExtenderAnswer,
    FilterBatchRequested,
    LateBatchDecided,
    NodeUpserted,
    OutgoingEvent,
    PodBound,
    PodDeleted,
    PodEvicted,
    PodNominated,
    PodSubmitted,
    Position,
    PreemptionDecided,
    PreemptionRequested,
    SchedulerStarted,
    SchedulingAttempted,
    envelope,
)
from shared.events.ids import random_id
from shared.framework import events as cluster_events
from shared.framework.node_info import generation_mark
from shared.framework.pod_info import PodInfo
from shared.framework.runtime import Framework
from shared.framework.snapshot import Snapshot
from shared.model.config import KubeSchedulerConfiguration
from shared.protocol.answers import walks
from shared.protocol.batch import BatchItem, Decision, decide_batch
from shared.protocol.merge_batch import merge_batch
from shared.protocol.packed_failures import pack_failures
from shared.protocol.raw_scores import NO_SCORES
from shared.protocol.resting import KEEP_AWAKE_S
from shared.protocol.same_answers import WalkBudget
from shared.protocol.sharded import MergedFilter, feasible_target, raw_by_plugin
from shared.protocol.shared_totals import SharedTotals
from shared.queue import FakeClock, QueuedPodInfo
from shared.queue.clock import MonotonicClock
from shared.scheduler.fit_error import NO_NODES_AVAILABLE, FitError
from shared.scheduler.queue_rules import (
    CYCLE_SECONDS,
    FailedAt,
    admit,
    attemptable,
    build_queue,
    park,
    placed,
    renominate,
)
from shared.scheduler.schedule_one import FilterExtender, ScheduleAlgorithm
from shared.scheduler.seeds import attempt_seed, config_hash

from .admissions import Admissions
from .cycles import Attempt, Evaluated, Gate
from .drivers import Driver, Lockstep, Pipelined
from .extender_cycles import ExtenderCycles
from .gather import Gatherer
from .metrics import SchedulerMetrics
from .options import SchedulerOptions
from .outbox import Outbox
from .proposal_policy import ProposalPolicy
from .scatter import Publish, Scatter
from .starts import QueueStarts

log = logging.getLogger(__name__)

WATERMARK_TOPICS = {spec.name: spec.partitions for spec in TOPICS if spec.name in GATED_TOPICS}
"""What filter workers and the preemption service fold; requests carry the queue's positions."""
FOLLOWED = (NODES, PODS, PLACEMENTS, BINDS, DECISIONS)
SMALLER_FOR_S = 60.0
"""How long batches stay at most half the size of one whose filter request no record could hold."""


class Scheduler:
    def __init__(self, view: ClusterView, profiles: dict[str, Framework], gatherer: Gatherer, publish: Publish,
                 metrics: SchedulerMetrics, options: SchedulerOptions = SchedulerOptions(), *,
                 config: KubeSchedulerConfiguration | None = None, producer: str = "queue",
                 gate: Gate | None = None, extenders: Sequence[FilterExtender] = ()) -> None:
        self.view, self.profiles, self.gatherer, self.publish = view, profiles, gatherer, publish
        self.config, self.gate = config, gate
        self.metrics = metrics
        lockstep = options.lockstep
        self.batch_size = 1 if lockstep else options.batch_size
        self._smaller: tuple[int, float] | None = None
        """(most pods, until when): batches held smaller since a filter request was too large."""
        self.feasible_budget = options.feasible_budget
        self.pipeline_depth = max(0, options.pipeline_depth)
        self.pipeline_most = max(0, options.pipeline_most)
        self.lockstep, self.seed, self.producer = lockstep, options.seed, producer
        self.share = options.share.serving(profiles)
        """The pods this queue schedules, where several share the cluster (`share`)."""
        above_s = None if options.propose_above_ms is None else options.propose_above_ms / 1000
        self.proposals = ProposalPolicy(always=options.propose, above_s=above_s)
        """Whether workers decide a batch as this queue would and answer with a ranking per pod,
        which the queue re-checks where its view moved (shared.protocol.proposing)."""
        self.driver: Driver = Lockstep(self) if lockstep else Pipelined(self)
        self.scatter = Scatter(gatherer, publish, producer, options.gather_timeout_s)
        self.preemption_timeout_s = options.preemption_timeout_s
        self.config_hash = config_hash(config)
        self.clock: FakeClock | MonotonicClock = FakeClock() if lockstep else MonotonicClock()
        self.queue = build_queue(profiles, config, self.clock, unschedulable_timeout_s=options.unschedulable_timeout_s)
        self.queue.on_incoming = metrics.count_incoming
        self.starts = QueueStarts(self.share)
        self._walker = ScheduleAlgorithm(random.Random(0))
        """Walks again for a pod whose ranked candidates pods decided before it took (`walk_again`)."""
        self.cycle = 0
        self.live = False
        self.attempts: dict[str, int] = {}
        self.queued: dict[str, PodInfo] = {}
        """Pods handed to the scheduling queue and not yet bound or gone, by uid."""
        self.parked: dict[str, QueuedPodInfo] = {}
        """Popped pods waiting for their bind's outcome, by uid (their QueuedPodInfo)."""
        self.refused: set[str] = set()
        """Pending pods whose latest bind was refused where queues share the cluster (`_bind_rejected`)."""
        self.failed_at = FailedAt()
        self.submitted_at: dict[str, datetime] = {}
        self.entered: dict[str, float] = {}
        self.preemptions: dict[str, tuple[FitError, Attempt, str]] = {}
        self.awaiting: Callable[[], bool] | None = None
        self._wake = asyncio.Event()
        self.outbox = Outbox(self._left_out)
        self.extender_cycles = ExtenderCycles(self, extenders, self._wake.set)
        self.last_message: dict[str, str | None] = {}
        """Each pod's latest attempt outcome: None once decided onto a node, else the reason."""
        self.admissions = Admissions(view, producer, self._wake.set, mine=self.share.owns)
        """Pods created with `spec.nodeName`, asked about to their node."""

    # --- cluster events (from the log follower) ---------------------------------------------

    def on_event(self, env: Envelope, position: Position) -> None:
        """Called after the view folded `env`: keep the scheduling queue in step with the cluster."""
        p = env.payload
        if isinstance(p, SchedulingAttempted):
            self.attempts[p.pod_uid] = max(self.attempts.get(p.pod_uid, 0), p.attempt)
            return
        if isinstance(p, BindRequested | PodBound | BindRejected) and is_admission(p.attempt_id):
            self.admissions.seen(p)
        if isinstance(p, PodSubmitted):
            self.submitted_at.setdefault(p.pod.metadata.uid, env.timestamp)
        if self.live:
            self._react(p)
        self._wake.set()

    def _react(self, p: object) -> None:
        q = self.queue
        match p:
            case PodSubmitted():
                self._enqueue(p.pod.metadata.uid)
                self.admissions.request(p.pod.metadata.uid)
            case NodeUpserted():
                q.move_all_to_active_or_backoff_queue(cluster_events.NODE_ADD, None,
                                                      self.view.nodes.get(p.node.metadata.name))
                self.admissions.node_added(p.node.metadata.name)
            case PodBound():
                info = self.view.pod_info(p.pod_uid)
                old = self.queued.pop(p.pod_uid, None)
                self.parked.pop(p.pod_uid, None)
                self.refused.discard(p.pod_uid)
                if old is not None:
                    q.delete(old)
                placed(q, old, info)
                q.done(p.pod_uid)
                self._observe_bound(p.pod_uid)
            case BindRejected():
                self._bind_rejected(p)
            case PodDeleted():
                old = self.queued.pop(p.uid, None)
                if old is not None:
                    q.delete(old)
                    q.nominator.delete_nominated_pod_if_exists(old)
                self.parked.pop(p.uid, None)
                self.refused.discard(p.uid)
                q.move_all_to_active_or_backoff_queue(cluster_events.ASSIGNED_POD_DELETE, None, None)
            case PodEvicted():
                self.queued.pop(p.uid, None)
                self.refused.discard(p.uid)
                q.move_all_to_active_or_backoff_queue(cluster_events.ASSIGNED_POD_DELETE, None, None)
                # Read before the preemptor's PodNominated, the eviction nominated it in the view.
                node = self.view.nominated.get(p.preemptor_uid)
                info = self.queued.get(p.preemptor_uid)
                if node and info is not None and info.pod.status.nominated_node_name != node:
                    self._nominated(p.preemptor_uid, node)
            case PodNominated():
                if self.view.nominated.get(p.uid, "") == p.node_name:  # not outdated by an eviction
                    self._nominated(p.uid, p.node_name)

    def _enqueue(self, uid: str) -> None:
        """Queue a submitted pod if it is this scheduler's to place and not placed or in flight."""
        pod = self.view.specs.get(uid)
        if pod is None or uid in self.queued or uid in self.view.deleted or self.view.node_of(uid) is not None:
            return
        if not attemptable(pod, self.profiles) or not self.share.owns(pod):
            return
        info = PodInfo(pod)
        self.queued[uid] = info
        self.entered.setdefault(uid, time.monotonic())
        if isinstance(self.clock, FakeClock):  # lockstep
            self.clock.advance(CYCLE_SECONDS)
        admit(self.queue, info)

    def _nominated(self, uid: str, node_name: str) -> None:
        old = self.queued.get(uid)
        if old is None:
            return
        new = PodInfo(with_nomination(old.pod, node_name))
        self.queued[uid] = new
        if uid in self.parked or self.view.node_of(uid) is not None:
            return  # decided, its bind in flight: the bind's outcome says what comes next, not this
        renominate(self.queue, old, new, node_name)

    def _bind_rejected(self, p: BindRejected, *, raced: bool = True) -> None:
        """`raced`: the binder refused it (maybe a race lost to another queue's pod), not this queue."""
        qpi = self.parked.pop(p.pod_uid, None)
        info = self.queued.get(p.pod_uid)
        if info is None:
            # Its bind was in flight when this queue started (assumed, so not queued): it is
            # queued now, as a pending pod is when a queue starts.
            self._enqueue(p.pod_uid)
            return
        if p.pod_uid in self.view.deleted:
            return
        self.failed_at.mark(p.pod_uid, self.view.version)
        if qpi is not None:
            park(self.queue, qpi, info, set(), self.queue.scheduling_cycle)
        else:
            self.queue.add(info)
        if self.share.whole or not raced:
            return
        # Where queues share the cluster a refusal is mostly a race lost to another queue's pod,
        # whose PodBound came first on the node's partition of `placements`: this view holds it,
        # so the pod is tried again at once rather than after its backoff (which held a whole
        # run's last pods for a second). Refused again before it is bound, it backs off as
        # upstream's pods do.
        if p.pod_uid in self.refused:
            return
        self.refused.add(p.pod_uid)
        self.queue.activate([info])

    def start_live(self) -> None:
        """The log has been read to its end: queue every pending pod in submission order."""
        pending = [uid for uid in self.view.specs if uid not in self.queued]
        pending.sort(key=lambda uid: (self.submitted_at.get(uid, datetime.max), uid))
        for uid in pending:
            self._enqueue(uid)
            self.admissions.request(uid)  # it waits for its node when the node does not exist
        self.live = True
        self._wake.set()

    # --- the loop -----------------------------------------------------------------------------

    async def run(self, stopping: asyncio.Event) -> None:
        started = SchedulerStarted(config=self.config, config_hash=self.config_hash, seed=self.seed,
                                   batch_size=self.batch_size)
        await self.publish([OutgoingEvent(DECISIONS, envelope(started, producer=self.producer))])
        try:
            await self._loop(stopping)
        finally:
            self.extender_cycles.close()

    async def between_cycles(self) -> None:
        """Upkeep after each cycle: decisions a failed publish left are published again, cycles
        whose extenders answered are decided, the heap settled."""
        if self.outbox:
            await self.flush()
        asked = self.admissions.take()
        if asked:
            await self.publish(asked)
        await self.extender_cycles.decide_answered()
        self.driver.upkeep()
        self._update_pending()

    async def _loop(self, stopping: asyncio.Event) -> None:
        while not stopping.is_set():
            await self.between_cycles()
            batch = self.pop_batch()
            if not batch:
                self._wake.clear()
                if batch is not None and self.driver.refill():
                    continue
                await self._idle(stopping)
                continue
            await self.driver.run(batch, stopping)

    async def _idle(self, stopping: asyncio.Event) -> None:
        self._update_pending()
        self.scatter.prime(self.cycle, self.view_mark, self.share.reply_partition, KEEP_AWAKE_S)
        waits = [asyncio.ensure_future(self._wake.wait()), asyncio.ensure_future(stopping.wait())]
        await asyncio.wait(waits, timeout=self.driver.idle_s, return_when=asyncio.FIRST_COMPLETED)
        for w in waits:
            w.cancel()

    def pop_batch(self) -> list[QueuedPodInfo] | None:
        """Up to `batch_size` pods, as many as `feasible_budget` allows their walks on a large
        cluster, and pods with required anti-affinity at most half the feasible nodes their walk
        seeks (`WalkBudget`); None while lockstep waits for the last attempt's outcome."""
        if not self.live or not self.driver.ready():
            return None
        batch: list[QueuedPodInfo] = []
        size = self._size_most()
        walks_most = self.feasible_budget // self._feasible_target()
        budget = WalkBudget(walks_most if walks_most < size else None, repelling_most=self._half_a_walk)
        while len(batch) < size:
            head = self.queue.active_head()
            if head is None:
                break
            if not budget.admit(head.pod_info, nominated=self.view.holds_nomination(head.pod_info.uid)):
                break
            self.queue.pop()  # the head just admitted: its scheduling cycle starts
            batch.append(head)
        return batch

    def _size_most(self) -> int:
        """`batch_size`, or less for a while after a filter request no record could hold."""
        if self._smaller is not None:
            most, until = self._smaller
            if time.monotonic() < until:
                return most
            self._smaller = None
        return self.batch_size

    def request_too_large(self, pods: int) -> None:
        """A filter request of `pods` pods was refused as larger than a record may be (its pods'
        specs are large): the batches of the next `SMALLER_FOR_S` hold at most half as many, so
        the pods go out in smaller requests instead of the same one being refused again."""
        most = min(max(1, pods // 2), self._size_most())  # a batch popped before a refusal lowers nothing
        self._smaller = (most, time.monotonic() + SMALLER_FOR_S)
        log.warning("queue: a filter request of %d pods is too large for a record; batches hold at most %d pods "
                    "for %.0f s", pods, most, SMALLER_FOR_S)

    def _feasible_target(self) -> int:
        return max(1, *(feasible_target(fwk, len(self.view.nodes)) for fwk in self.profiles.values()))

    def _half_a_walk(self, info: PodInfo) -> int:
        """Half the feasible nodes the pod's own profile looks for (the most pods with required
        anti-affinity a batch holds, `WalkBudget`)."""
        fwk = self.profiles.get(info.pod.spec.scheduler_name)
        return (feasible_target(fwk, len(self.view.nodes)) if fwk is not None else self._feasible_target()) // 2

    def requeue(self, attempts: list[Attempt]) -> None:
        self.put_back(a.info for a in attempts)

    def put_back(self, infos: Iterable[PodInfo]) -> None:
        """Queue again the pods of a failed cycle, except those it placed (parked until their bind
        is answered), those still waiting for extenders and those whose preemption was asked
        for: they must not be attempted twice."""
        preempting = {a.info.uid for _, a, _ in self.preemptions.values()}
        waiting = self.extender_cycles.waiting
        for info in infos:
            if info.uid not in waiting and info.uid not in self.parked and info.uid not in preempting:
                self.queue.done(info.uid)
                self.queue.add(info)

    def attempts_of(self, batch: list[QueuedPodInfo]) -> list[Attempt]:
        attempts = [self._attempt(qpi) for qpi in batch]
        self.metrics.batch_pods.observe(len(attempts))
        return attempts

    def view_mark(self) -> tuple[dict[str, list[int]], list[Assumed]]:
        """The view's watermark and assumptions, the profiles pointed at it (nominations as the
        filter workers and replay see them)."""
        point_at(self.profiles.values(), self.view)
        return (self.view.watermark(WATERMARK_TOPICS),
                [Assumed(pod_uid=u, node_name=n) for u, n in self.view.assumed.items()])

    def mark_late(self, evaluated: Evaluated, watermark: dict[str, list[int]], assumed: list[Assumed]) -> bool:
        """Whether the batch is decided on a view other than the one its answers were made on (the
        view moved since the request, or a worker answered off its watermark); such a decision is
        recorded as late, on the view `watermark` and `assumed` name."""
        moved = evaluated.off_view or watermark != evaluated.watermark or assumed != evaluated.assumed
        if moved:
            self.record_late(evaluated.batch_id, watermark, assumed)
        return moved

    def record_late(self, batch_id: str, watermark: dict[str, list[int]], assumed: list[Assumed]) -> None:
        late = LateBatchDecided(batch_id=batch_id, watermark=watermark, assumed=assumed)
        self.emit(DECISIONS, envelope(late, producer=self.producer))

    def emit(self, topic: str, env: Envelope) -> None:
        """Publish `env` with the cycle's decisions, at the next flush."""
        self.outbox.add(OutgoingEvent(topic, env))

    async def evaluate(self, attempts: list[Attempt], stopping: asyncio.Event) -> Evaluated | None:
        """Scatter the pods to the shards at the view's watermark and merge their answers (None when
        there are no nodes: the pods failed, published already)."""
        self.cycle += 1
        watermark, assumed = self.view_mark()
        generation = generation_mark()  # taken with the watermark: no NodeInfo changes in between
        snapshot = self.view.snapshot()
        if snapshot.num_nodes() == 0:
            for a in attempts:
                self._unschedulable(a, NO_NODES_AVAILABLE, set(), "")
            await self.flush()
            return None
        batch_id = str(random_id())
        cycle = self.cycle
        # Extenders filter and prioritize the merged feasible nodes: such pods are never proposed.
        propose = not self.extender_cycles.wanted_by_any(attempts) and self.proposals.propose()
        if propose:
            self.metrics.proposed_pods.inc(len(attempts))
        start = self.starts.reserve(batch_id, [a.info.pod for a in attempts], snapshot.num_nodes())
        try:
            try:
                filtered = await self.scatter.send(FilterBatchRequested(
                    batch_id=batch_id, cycle=cycle, phase="filter", pods=[a.info.pod for a in attempts],
                    starts=[start] * len(attempts), watermark=watermark, assumed=assumed, whole=True,
                    propose=propose, seeds=[a.seed for a in attempts] if propose else [],
                    answer_partition=self.share.reply_partition), stopping)
            finally:
                self.starts.release(batch_id)
            batch = merge_batch([(a.fwk, a.info) for a in attempts], filtered, snapshot, start)
            merged, raw, second = batch.merged, batch.raw, batch.to_score
            self.starts.advance([m.processed for m in merged if m.advance], snapshot.num_nodes(), batch_id)
            if second:
                scored = await self.scatter.send(FilterBatchRequested(
                    batch_id=str(random_id()), cycle=cycle, phase="score",
                    pods=[attempts[i].info.pod for i in second], feasible=[merged[i].feasible for i in second],
                    watermark=watermark, assumed=assumed, whole=True,
                    answer_partition=self.share.reply_partition), stopping)
                for i in second:
                    uid = attempts[i].info.uid
                    raw[uid], merged[i].error = raw_by_plugin(walks(scored.get(uid, [])))
        except BaseException as exc:
            self.starts.decided(batch_id)  # given up: no decision will come
            self.gatherer.answered_off_view(batch_id)  # nor a question about its answers
            if isinstance(exc, RecordTooLarge):
                if len(attempts) > 1:
                    self.request_too_large(len(attempts))
                    raise  # the cycle fails: its pods go back to the queue, for smaller batches
                # A pod whose request alone no record holds: its own error, not a batch to make
                # smaller (it backs off as after any error, and is tried again).
                self._unschedulable(attempts[0], f"its filter request is too large to send: {exc}", set(),
                                    batch_id, result="error")
                await self.flush()
                return None
            raise
        return Evaluated(batch_id, snapshot, watermark, assumed, merged, raw, start, proposed=propose,
                         off_view=self.gatherer.answered_off_view(batch_id), generation=generation)

    def decide(self, attempts: list[Attempt], merged: list[MergedFilter], evaluated: Evaluated,
                answers: dict[str, list[ExtenderAnswer]], watermark: dict[str, list[int]], assumed: list[Assumed],
                *, placed_before: bool = False, measured: bool = True,
                shared: SharedTotals | None = None) -> list[Decision]:
        """Decide the pods (`merged[i]` is `attempts[i]`'s) in order on the view as it is now (binds
        happen inside); `watermark` and `assumed` name that view. `measured`: a batch the queue
        ranks itself that the proposal policy may time (not one waiting for extenders, which is
        never proposed and re-checked whole)."""
        batch_id = evaluated.batch_id
        by_uid = {a.info.uid: a for a in attempts}
        items = [BatchItem(a.fwk, a.info, m, evaluated.raw.get(a.info.uid, NO_SCORES), a.seed,
                           answers.get(a.info.uid, ()), evaluated.start)
                 for a, m in zip(attempts, merged)]
        # A proposed batch's pods that fit nowhere come back as walks: its slices are never timed.
        ranking = measured and self.proposals.measures and not evaluated.proposed
        started = time.thread_time() if ranking else 0.0
        decisions = decide_batch(items, self.view.snapshot, lambda uid, host: self._bind(by_uid[uid], host, batch_id),
                                 placed_before=placed_before, walker=self._walker,
                                 may_walk=lambda item: self._may_walk(item, by_uid[item.info.uid].qpi),
                                 shared=shared, unchanged_below=None if evaluated.off_view else evaluated.generation)
        if ranking:
            self.proposals.ranked(len(items), time.thread_time() - started)
        self.metrics.walked_again_pods.inc(sum(d.walked_again for d in decisions))
        # The node order at `watermark`, which a preemption request's node positions refer to.
        order = evaluated.snapshot if watermark is evaluated.watermark else self.view.snapshot()
        for a, d in zip(attempts, decisions):
            self._decided(a, d, batch_id, watermark, assumed, order)
        return decisions

    def _attempt(self, qpi: QueuedPodInfo) -> Attempt:
        info: PodInfo = self.queued.get(qpi.pod_info.uid, qpi.pod_info)
        qpi.pod_info = info
        number = self.attempts.get(info.uid, 0) + 1
        self.attempts[info.uid] = number
        if isinstance(self.clock, FakeClock):  # lockstep
            self.clock.advance(CYCLE_SECONDS)
        return Attempt(qpi, info, self.profiles[info.pod.spec.scheduler_name], number,
                        attempt_seed(self.seed, info.key, number), str(random_id()), time.perf_counter(),
                        self.queue.scheduling_cycle)

    # --- decisions ----------------------------------------------------------------------------

    async def flush(self) -> None:
        """Publish the cycle's decisions at once (`Outbox`)."""
        await self.outbox.flush(self.publish)

    def _left_out(self, event: OutgoingEvent, exc: RecordTooLarge) -> None:
        """A decision no record can hold: a bind request is taken back as its binder's refusal
        would be (the pod backs off and is tried again). Nothing is done here for a preemption
        request: it is released after the preemption timeout."""
        p = event.envelope.payload
        if isinstance(p, BindRequested):
            self.view.forget(p.pod_uid)
            point_at(self.profiles.values(), self.view)
            self._bind_rejected(BindRejected(pod_uid=p.pod_uid, node_name=p.node_name,
                                             attempt_id=p.attempt_id, reason=str(exc)), raced=False)

    def _decided(self, a: Attempt, d: Decision, batch_id: str, watermark: dict[str, list[int]],
                 assumed: list[Assumed], order: Snapshot) -> None:
        """The side effects of a decision other than a bind (binds happen inside `decide_batch`)."""
        if d.verdict == "error":
            self._unschedulable(a, d.error, set(), batch_id, result="error")
        elif d.verdict == "fit-error" and d.fit is not None:
            self._fit_error(a, d.fit, batch_id, watermark, assumed, order)
        elif d.verdict == "retry":
            self.queue.done(a.info.uid)
            self.queue.add(a.info)

    def _may_walk(self, item: BatchItem, qpi: QueuedPodInfo) -> bool:
        """Whether a pod whose candidates are gone walks again here: a proposed pod goes back to
        the workers instead (walking again is the whole attempt, which proposals keep off the
        queue), another only when first in line."""
        return not item.merged.ranked and self.first_in_line(qpi)

    def first_in_line(self, qpi: QueuedPodInfo) -> bool:
        """Whether a popped pod may walk again now: no pod waiting in the active queue would be
        popped before it (one scheduler deciding pods one at a time would decide that one first),
        and no pod of higher priority waits for its preemption to be decided (one scheduler would
        have nominated it a node, whose room this pod's walk would then leave alone). Pods already
        popped into the next batch at the shards are not looked at: popped after this one, they
        come after it unless they arrived since with a higher priority."""
        head = self.queue.active_head()
        if head is not None and self.queue.less(head, qpi):
            return False
        priority = qpi.pod_info.priority
        return all(a.info.priority <= priority for _, a, _ in self.preemptions.values())

    def _bind(self, a: Attempt, host: str, batch_id: str) -> None:
        uid = a.info.uid
        self.view.assume(uid, host)
        point_at(self.profiles.values(), self.view)
        self.parked[uid] = a.qpi
        self.queue.nominator.delete_nominated_pod_if_exists(a.info)
        self.queue.done(uid)
        decided = SchedulingAttempted(pod_uid=uid, attempt=a.number, profile=a.fwk.profile_name, node_name=host,
                                      message=None, seed=a.seed, config_hash=self.config_hash, batch_id=batch_id)
        bind = BindRequested(pod_uid=uid, pod=a.info.pod, node_name=host, attempt_id=a.attempt_id, seed=a.seed)
        self.outbox.add(
            OutgoingEvent(DECISIONS, envelope(decided, producer=self.producer, correlation_id=a.attempt_id)),
            OutgoingEvent(BINDS, envelope(bind, producer=self.producer, correlation_id=a.attempt_id)),
        )
        self._observe(a, "scheduled")
        self.last_message[uid] = None
        if self.lockstep:
            self.awaiting = lambda: uid not in self.parked

    def _fit_error(self, a: Attempt, fit: FitError, batch_id: str, watermark: dict[str, list[int]],
                   assumed: list[Assumed], order: Snapshot) -> None:
        """`order`: the view's nodes at `watermark` (the request names nodes by position in it)."""
        plugins = set(fit.diagnosis.unschedulable_plugins)
        if not a.fwk.post_filter_plugins:
            self._unschedulable(a, fit.message(), plugins, batch_id)
            return
        request = PreemptionRequested(
            pod=a.info.pod, node_statuses=pack_failures(fit.diagnosis.node_to_status, order),
            attempt_id=a.attempt_id, seed=a.seed, watermark=watermark, assumed=assumed)
        self.outbox.add(OutgoingEvent(PREEMPTION_REQUESTS, envelope(request, producer=self.producer,
                                                                    correlation_id=a.attempt_id)))
        self.preemptions[a.attempt_id] = (fit, a, batch_id)
        if self.lockstep:
            self._park(a, plugins)
        else:
            # Its cycle lasts until PostFilter is decided (as upstream's PreEnqueue holds a pod
            # whose preemption runs): retried meanwhile, it would ask for a second preemption.
            self.failed_at.mark(a.info.uid, self.view.version)
            a.qpi.unschedulable_plugins = plugins

    def release_unanswered(self) -> None:
        """A preemptor whose request has gone unanswered for the preemption timeout (the request
        dead-lettered, say) goes back to the queue, as an unschedulable pod would; a decision that
        comes later is ignored."""
        limit = time.perf_counter() - self.preemption_timeout_s
        for attempt_id in [k for k, (_, a, _) in self.preemptions.items() if a.started < limit]:
            _, a, _ = self.preemptions.pop(attempt_id)
            log.warning("queue: no preemption decision for %s after %.0f s; it goes back to the queue",
                        a.info.key, time.perf_counter() - a.started)
            self.queue.add_unschedulable_if_not_present(a.qpi, a.cycle)

    def preemption_decided(self, env: Envelope) -> list[OutgoingEvent]:
        """PostFilter's outcome: the attempt's message is complete now (it ends with preemption's)."""
        p = env.payload
        assert isinstance(p, PreemptionDecided)
        pending = self.preemptions.pop(p.attempt_id, None)
        if pending is None:
            return []
        fit, a, batch_id = pending
        if not self.lockstep:
            self.queue.add_unschedulable_if_not_present(a.qpi, a.cycle)
        fit.diagnosis.post_filter_msg = p.message
        victims = {v.uid for v in p.victims}
        if self.lockstep:
            node = p.nominated_node
            self.awaiting = lambda: victims <= self.view.deleted and (
                not node or self.view.nominated.get(a.info.uid) == node)
        if p.fits:
            # Room was made for the pod after its attempt (by other evictions): it goes again now.
            self.queue.activate([a.info])
        self._wake.set()
        return [self._attempted(a, fit.message(), "unschedulable", batch_id, caused_by=env)]

    def _unschedulable(self, a: Attempt, message: str, plugins: set[str], batch_id: str,
                       result: str = "unschedulable") -> None:
        self._park(a, plugins)
        self.outbox.add(self._attempted(a, message, result, batch_id))

    def _park(self, a: Attempt, plugins: set[str]) -> None:
        self.failed_at.mark(a.info.uid, self.view.version)
        park(self.queue, a.qpi, a.info, plugins, a.cycle)

    def _attempted(self, a: Attempt, message: str, result: str, batch_id: str,
                   caused_by: Envelope | None = None) -> OutgoingEvent:
        self._observe(a, result)
        self.last_message[a.info.uid] = message
        decided = SchedulingAttempted(pod_uid=a.info.uid, attempt=a.number, profile=a.fwk.profile_name,
                                      node_name=None, message=message, seed=a.seed, config_hash=self.config_hash,
                                      batch_id=batch_id)
        return OutgoingEvent(DECISIONS, envelope(decided, producer=self.producer, caused_by=caused_by,
                                                 correlation_id=a.attempt_id))

    # --- metrics ------------------------------------------------------------------------------

    def _observe(self, a: Attempt, result: str) -> None:
        self.metrics.attempted(result, a.fwk.profile_name, time.perf_counter() - a.started)

    def _observe_bound(self, uid: str) -> None:
        entered = self.entered.pop(uid, None)
        if entered is not None:
            self.metrics.scheduled(self.attempts.get(uid, 1), time.monotonic() - entered)

    def _update_pending(self) -> None:
        self.metrics.pending_in(self.queue)
