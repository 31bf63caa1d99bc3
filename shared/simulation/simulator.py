"""`berth simulate`: the whole scheduler in-process over a static cluster.

Pending pods are scheduled in queue order, each against the state the pods before it left.
A FitError runs PostFilter (preemption): victims are deleted at once, the preemptor is nominated
and retried. Cluster events (binds, deletions) move unschedulable pods back as upstream's queue
does; when the queue runs dry, pods that failed before the cluster last changed are flushed back
(as upstream's unschedulable-pods timeout would), until no pod can make progress.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Protocol

import msgspec

from shared.extender.binding import BindingExtender, extenders_binding
from shared.framework import events
from shared.framework.cycle_state import CycleState
from shared.framework.namespaces import NamespaceLabels
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.runtime import Framework
from shared.framework.snapshot import Snapshot, index_images
from shared.framework.status import Code, Status
from shared.model import KubeSchedulerConfiguration, Pod
from shared.model.loader import ClusterInput
from shared.profiles import build_profiles
from shared.queue import FakeClock, QueuedPodInfo, SchedulingQueue
from shared.scheduler.fit_error import FitError, NoNodesAvailable
from shared.scheduler.outcome import Phase, PodOutcome, SimulationReport
from shared.scheduler.queue_rules import (
    CYCLE_SECONDS,
    FailedAt,
    admit,
    attemptable,
    bring_back,
    build_queue,
    park,
    placed,
    renominate,
)
from shared.scheduler.schedule_one import FilterExtender, ScheduleAlgorithm, SchedulingError
from shared.scheduler.seeds import attempt_seed

GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"
TERMINAL_PHASES = ("Succeeded", "Failed")


class SimulatedExtender(FilterExtender, BindingExtender, Protocol):
    """An extender as the in-process scheduler calls it: filter, prioritize, bind."""


ExtenderFactory = Callable[[KubeSchedulerConfiguration | None, Callable[[str], NodeInfo | None]],
                           Sequence[SimulatedExtender]]
"""The configuration's extenders, given a lookup of the simulator's nodes (the HTTP client's
`build_extenders`: the core does no I/O itself)."""


class _PodRecord:
    __slots__ = ("attempts", "info", "message", "node_name", "phase", "preempted_by")

    def __init__(self, info: PodInfo) -> None:
        self.info = info
        self.phase: Phase = "Pending"
        self.node_name: str | None = None
        self.message: str | None = None
        self.preempted_by: str | None = None
        self.attempts = 0


class Simulator:
    def __init__(self, cluster: ClusterInput, seed: int = 0,
                 on_progress: Callable[[int, int], None] | None = None,
                 on_attempt: Callable[[PodInfo, str | None], None] | None = None,
                 make_extenders: ExtenderFactory | None = None) -> None:
        """`on_progress(cycles, pending)` every 100 attempts; `on_attempt(pod, node or None)` after
        each attempt (benchmarks time attempts with it); `make_extenders`: the configuration's
        extenders (needed when it names any)."""
        self.cluster = cluster
        self.seed = seed
        self.rng = random.Random(seed)
        self.on_progress = on_progress
        self.on_attempt = on_attempt
        self.profiles: dict[str, Framework] = build_profiles(cluster.config)
        config = cluster.config
        self.clock = FakeClock()
        infos = [NodeInfo(n) for n in cluster.nodes]
        index_images(infos)
        self.snapshot = Snapshot(infos, NamespaceLabels(cluster.namespaces))
        self.records: dict[str, _PodRecord] = {}
        self.order: list[str] = []
        self.version = 0
        self.cycles = 0
        self.failed_at = FailedAt()
        self.queue: SchedulingQueue = build_queue(self.profiles, config, self.clock)
        if make_extenders is None and config is not None and config.extenders:
            raise ValueError("the configuration names extenders: pass make_extenders to call them")
        extenders = list(make_extenders(config, self.snapshot.get)) if make_extenders is not None else []
        for fwk in self.profiles.values():
            fwk.set_extenders(list(extenders))
            fwk.set_snapshot(self.snapshot)
            fwk.set_nominator(self.queue.nominator)
            fwk.set_pod_disruption_budgets(cluster.pdbs)
            for plugin in fwk.plugins.values():
                if hasattr(plugin, "rng"):
                    plugin.rng = self.rng
        self.algorithm = ScheduleAlgorithm(self.rng, extenders)
        self.extenders = extenders
        self._load_pods(cluster.pods)

    def _load_pods(self, pods: list[Pod]) -> None:
        for pod in pods:
            info = PodInfo(pod)
            record = _PodRecord(info)
            self.records[info.uid] = record
            self.order.append(info.uid)
            if pod.spec.node_name:
                record.phase = "Bound"
                record.node_name = pod.spec.node_name
                node = self.snapshot.get(pod.spec.node_name)
                if node is not None and pod.status.phase not in TERMINAL_PHASES:
                    node.add_pod(info)
        for uid in self.order:
            self._enqueue(self.records[uid])

    def _enqueue(self, record: _PodRecord) -> None:
        pod = record.info.pod
        if not attemptable(pod, self.profiles):
            return
        self.clock.advance(CYCLE_SECONDS)
        admit(self.queue, record.info)
        if pod.spec.scheduling_gates:
            record.message = GATED_MESSAGE

    def submit(self, pod: Pod) -> None:
        """A pending pod created while the simulation runs (a benchmark's churn), queued as a
        loaded one is."""
        record = _PodRecord(PodInfo(pod))
        if record.info.uid in self.records or pod.spec.node_name:
            raise ValueError(f"submit takes a new pending pod: {record.info.uid} is known or names a node")
        self.records[record.info.uid] = record
        self.order.append(record.info.uid)
        self._enqueue(record)

    # -- the loop ---------------------------------------------------------------------------------
    def run(self) -> SimulationReport:
        budget = 20 * len(self.records) + 1000
        while self.cycles < budget:
            qpi = self.queue.pop()
            if qpi is None:
                if not self._refill():
                    break
                continue
            self.cycles += 1
            self.clock.advance(CYCLE_SECONDS)
            self._schedule_one(qpi)
            if self.on_attempt is not None:
                record = self.records[qpi.pod_info.uid]
                self.on_attempt(record.info, record.node_name if record.phase == "Bound" else None)
            if self.on_progress is not None and self.cycles % 100 == 0:
                self.on_progress(self.cycles, self._pending_count())
        return self.report()

    def _refill(self) -> bool:
        """Bring waiting pods back when the active queue is empty; False when nothing can change.

        A retry can only help a pod that failed before the cluster last changed; time passing (the
        backoff and the unschedulable-pods timeout) is jumped over in one step, so each refill is
        paid for by a bind or an eviction and the loop ends."""
        pending = (uid for uid, r in self.records.items() if r.phase == "Pending")
        if not self.failed_at.stale(pending, self.version):
            return False
        self.failed_at.renew(self.version)
        bring_back(self.queue, self.clock)
        return True

    def _schedule_one(self, qpi: QueuedPodInfo) -> None:
        info: PodInfo = qpi.pod_info
        record = self.records[info.uid]
        record.attempts += 1
        self.rng.seed(attempt_seed(self.seed, info.key, record.attempts))
        fwk = self.profiles[info.pod.spec.scheduler_name]
        state = CycleState()
        try:
            result = self.algorithm.schedule_pod(fwk, state, info, self.snapshot)
        except FitError as fit_error:
            self._handle_fit_error(qpi, fwk, state, record, fit_error)
            return
        except NoNodesAvailable as exc:
            self._fail(qpi, record, str(exc), set())
            return
        except SchedulingError as exc:
            self._fail(qpi, record, exc.status.message(), set())
            return
        host = result.suggested_host
        status = fwk.run_reserve_plugins_reserve(state, info, host) or fwk.run_permit_plugins(state, info, host)
        if status is None or status.is_success():
            status = fwk.run_pre_bind_plugins(state, info, host)
        if status is None or status.is_success():
            bound, error = extenders_binding(self.extenders, info, host)
            if bound:  # an extender with bindVerb binds instead of the Bind plugins
                bind_status = Status(Code.ERROR, error) if error else None
            else:
                bind_status = fwk.run_bind_plugins(state, info, host)
            status = None if bind_status is None or bind_status.is_success() else bind_status
        if status is not None and not status.is_success():
            fwk.run_reserve_plugins_unreserve(state, info, host)
            self._fail(qpi, record, status.message(), {status.plugin} if status.plugin else set())
            return
        self._bind(record, host)
        fwk.run_post_bind_plugins(state, info, host)
        self.queue.done(info.uid)

    def _handle_fit_error(self, qpi: QueuedPodInfo, fwk: Framework, state: CycleState, record: _PodRecord,
                          fit_error: FitError) -> None:
        info = record.info
        plugins = set(fit_error.diagnosis.unschedulable_plugins)
        if not fwk.post_filter_plugins:
            self._fail(qpi, record, fit_error.message(), plugins)
            return
        result, status = fwk.run_post_filter_plugins(state, info, fit_error.diagnosis.node_to_status)
        fit_error.diagnosis.post_filter_msg = status.message()
        # The pod is parked first; the evictions that follow are cluster events that move it back,
        # as the victims' deletions do upstream.
        self._fail(qpi, record, fit_error.message(), plugins)
        if status.code == Code.SUCCESS and result is not None and result.nominated_node_name:
            self._apply_preemption(record, result.nominated_node_name, result.victims, result.nominations_to_clear)
        elif result is not None and not result.nominated_node_name and info.pod.status.nominated_node_name:
            self._set_nominated(record, "")

    def _fail(self, qpi: QueuedPodInfo, record: _PodRecord, message: str, plugins: set[str]) -> None:
        record.message = message
        self.failed_at.mark(record.info.uid, self.version)
        park(self.queue, qpi, record.info, plugins, self.queue.scheduling_cycle)

    # -- effects ----------------------------------------------------------------------------------
    def _bind(self, record: _PodRecord, host: str) -> None:
        info = record.info
        node = self.snapshot.get(host)
        assert node is not None
        bound = msgspec.structs.replace(
            info.pod,
            spec=msgspec.structs.replace(info.pod.spec, node_name=host),
            status=msgspec.structs.replace(info.pod.status, nominated_node_name=""),
        )
        record.info = info.placed(bound)
        node.add_pod(record.info)
        record.phase, record.node_name, record.message = "Bound", host, None
        self.version += 1
        placed(self.queue, info, record.info)

    def _apply_preemption(self, record: _PodRecord, node_name: str, victims: list[PodInfo],
                          clear: list[PodInfo]) -> None:
        node = self.snapshot.get(node_name)
        for victim in victims:
            v = self.records.get(victim.uid)
            if node is not None:
                node.remove_pod(victim)
            if v is not None:
                v.phase, v.preempted_by, v.message = "Deleted", record.info.key, None
        for pod in clear:
            other = self.records.get(pod.uid)
            if other is not None:
                self._set_nominated(other, "")
        self._set_nominated(record, node_name)
        if victims:
            self.version += 1
            for victim in victims:
                self.queue.move_all_to_active_or_backoff_queue(events.ASSIGNED_POD_DELETE, victim, None)

    def _set_nominated(self, record: _PodRecord, node_name: str) -> None:
        pod = record.info.pod
        status = msgspec.structs.replace(pod.status, nominated_node_name=node_name)
        updated = msgspec.structs.replace(pod, status=status)
        old = record.info
        record.info = old.placed(updated)
        renominate(self.queue, old, record.info, node_name)

    # -- results ----------------------------------------------------------------------------------
    def _pending_count(self) -> int:
        return sum(1 for r in self.records.values() if r.phase == "Pending")

    def report(self) -> SimulationReport:
        pods: list[PodOutcome] = []
        for uid in self.order:
            r = self.records[uid]
            pod = r.info.pod
            nominated = pod.status.nominated_node_name or None
            pods.append(PodOutcome(
                namespace=r.info.namespace,
                name=r.info.name,
                phase=r.phase,
                nodeName=r.node_name,
                nominatedNodeName=nominated if r.phase == "Pending" else None,
                message=r.message if r.phase == "Pending" else None,
                preemptedBy=r.preempted_by,
                priority=r.info.priority,
                attempts=r.attempts,
            ))
        return SimulationReport(pods=pods, seed=self.seed, cycles=self.cycles)


def simulate(cluster: ClusterInput, seed: int = 0, make_extenders: ExtenderFactory | None = None) -> SimulationReport:
    return Simulator(cluster, seed, make_extenders=make_extenders).run()
