"""The scheduling queue's part in an attempt, as the in-process simulator and the queue service both
play it: which pods are queued, how a placement, a nomination and a failure reach the queue, and
when waiting pods are brought back once nothing else can run.

Kept in one place so that lockstep mode of the queue service decides as `berth simulate` does: the
two differ only in where the cluster's state lives (the simulator's snapshot, the service's view
folded from the log), not in how the queue reacts to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from shared.framework import events
from shared.framework.pod_info import PodInfo
from shared.framework.runtime import Framework
from shared.model import Pod
from shared.model.config import KubeSchedulerConfiguration
from shared.queue import FakeClock, QueuedPodInfo, SchedulingQueue
from shared.queue.clock import Clock
from shared.queue.scheduling_queue import DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION

CYCLE_SECONDS = 0.001
"""The logical time one attempt (and one pod's arrival) takes in lockstep and in the simulator."""


def build_queue(profiles: Mapping[str, Framework], config: KubeSchedulerConfiguration | None, clock: Clock,
                *, unschedulable_timeout_s: float | None = None) -> SchedulingQueue:
    """The queue the profiles ask for: the first profile's QueueSort, every profile's PreEnqueue
    plugins by scheduler name, the configured backoffs, and the events each plugin registered."""
    default = next(iter(profiles.values()))
    return SchedulingQueue(
        clock=clock,
        less=default.queue_sort_plugin.less if default.queue_sort_plugin else None,
        rank_of=default.queue_sort_plugin.rank_of() if default.queue_sort_plugin else None,
        pod_initial_backoff_seconds=config.pod_initial_backoff_seconds if config else 1,
        pod_max_backoff_seconds=config.pod_max_backoff_seconds if config else 10,
        pre_enqueue_plugins={name: fwk.pre_enqueue_plugins for name, fwk in profiles.items()},
        cluster_event_map=event_map(profiles),
        pod_max_in_unschedulable_pods_duration=(DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION
                                                if unschedulable_timeout_s is None else unschedulable_timeout_s),
    )


def event_map(profiles: Mapping[str, Framework]) -> dict[str, list[events.ClusterEvent]]:
    """Plugin name -> the cluster events that may make pods it rejected schedulable."""
    out: dict[str, list[events.ClusterEvent]] = {}
    for fwk in profiles.values():
        for name, plugin in fwk.plugins.items():
            register = getattr(plugin, "events_to_register", None)
            if register is None:
                continue
            out[name] = [
                e if isinstance(e, events.ClusterEvent) else events.ClusterEvent(e[0], events.ActionType(e[1]))
                for e in register()
            ]
    return out


def attemptable(pod: Pod, profiles: Mapping[str, Framework]) -> bool:
    """Whether the pod is this scheduler's to place: not bound already, a profile serves its
    schedulerName, and it is not being deleted (upstream's skipPodSchedule)."""
    return not pod.spec.node_name and pod.spec.scheduler_name in profiles and not pod.metadata.deletion_timestamp


def admit(queue: SchedulingQueue, info: PodInfo) -> None:
    """Queue a pending pod; one whose status names a node is the nominator's from the start."""
    if info.pod.status.nominated_node_name:
        queue.nominator.add_nominated_pod(info, info.pod.status.nominated_node_name)
    queue.add(info)


def park(queue: SchedulingQueue, qpi: QueuedPodInfo, info: PodInfo, plugins: set[str], cycle: int) -> None:
    """A failed attempt: the pod waits among the unschedulable pods (or in backoff, when a cluster
    event came during its cycle) for an event that the plugins that rejected it care about."""
    qpi.pod_info = info
    qpi.unschedulable_plugins = plugins
    queue.add_unschedulable_if_not_present(qpi, cycle)


def placed(queue: SchedulingQueue, pending: PodInfo | None, bound: PodInfo | None) -> None:
    """A pod now counts on its node: its nomination ends, and pods waiting for room move."""
    if pending is not None:
        queue.nominator.delete_nominated_pod_if_exists(pending)
    if bound is not None:
        queue.assigned_pod_added(bound)


def renominate(queue: SchedulingQueue, old: PodInfo, new: PodInfo, node_name: str) -> None:
    """The pod's nominated node changed (set by preemption, or cleared): the nominator and the
    queue hold the new PodInfo."""
    queue.nominator.delete_nominated_pod_if_exists(old)
    if node_name:
        queue.nominator.add_nominated_pod(new, node_name)
    queue.update(old, new)


class FailedAt:
    """The cluster's version when each pending pod last failed: a retry helps only a pod that
    failed before the cluster last changed."""

    def __init__(self) -> None:
        self.versions: dict[str, int] = {}

    def mark(self, uid: str, version: int) -> None:
        self.versions[uid] = version

    def stale(self, pending: Iterable[str], version: int) -> bool:
        return any(0 <= self.versions.get(uid, -1) < version for uid in pending)

    def renew(self, version: int) -> None:
        for uid in self.versions:
            self.versions[uid] = version


def bring_back(queue: SchedulingQueue, clock: FakeClock) -> None:
    """Jump the logical clock past the unschedulable-pods timeout and the next backoff expiry, and
    move every waiting pod back: what time passing would do once the active queue ran dry."""
    wake = clock.now() + queue.pod_max_in_unschedulable_pods_duration + 1
    expiry = queue.next_backoff_expiry()
    clock.set(max(wake, expiry or 0.0))
    queue.flush_backoff_q_completed()
    queue.flush_unschedulable_pods_left_over()
