"""The scheduling queue: upstream's PriorityQueue (backend/queue/scheduling_queue.go) without
goroutines or a wall clock.

Three places hold a pending pod:
- activeQ: a heap ordered by the QueueSort plugin's `less`; `pop()` takes its head;
- backoffQ: pods waiting out initial * 2^(attempts-1) seconds (capped), ordered by expiry;
- unschedulablePods: pods rejected by plugins, waiting for a cluster event those plugins
  registered for, or for podMaxInUnschedulablePodsDuration to pass; gated pods (a PreEnqueue
  plugin said no) wait here too and never reach activeQ while gated.

Upstream runs `flush_backoff_q_completed` every second and `flush_unschedulable_pods_left_over`
every 30 s; here the owner calls them, advancing its clock to `next_backoff_expiry()` when idle.

Semantics are upstream's with SchedulerQueueingHints disabled (every registered event counts as
"Queue", and the moveRequestCycle rule decides where a failed pod goes) and
SchedulerPopFromBackoffQ disabled (pop never takes a pod that is still backing off).
In-flight tracking is reduced to what a single scheduling loop needs: `pop` marks a pod in
flight, `done` / `add_unschedulable_if_not_present` clear it, and an update or deletion that
arrives meanwhile is applied when the pod comes back instead of enqueueing a second copy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from shared.framework import events
from shared.framework.events import ClusterEvent
from shared.framework.interfaces import PreEnqueuePlugin
from shared.framework.pod_info import PodInfo

from .backoff import BackoffQueue
from .clock import Clock
from .heap import KeyedHeap
from .nominator import Nominator
from .pending import PendingPods
from .pod_changes import (
    BACKOFF_COMPLETE,
    FORCE_ACTIVATE,
    SCHEDULE_ATTEMPT_FAILURE,
    UNSCHEDULED_POD_ADD,
    UNSCHEDULED_POD_UPDATE,
    assigned_pod_update_events,
    is_pod_updated,
)
from .queued_pod_info import LessFn, QueuedPodInfo, priority_sort_less, priority_sort_rank

DEFAULT_POD_INITIAL_BACKOFF_SECONDS = 1.0
DEFAULT_POD_MAX_BACKOFF_SECONDS = 10.0
DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION = 300.0
POD_TOPOLOGY_SPREAD = "PodTopologySpread"
_SCALE_DOWN = ClusterEvent(events.POD, events.ActionType.UPDATE_POD_SCALE_DOWN)

PreCheck = Callable[[PodInfo], bool]
EventMap = Mapping[str, Sequence[ClusterEvent | tuple[str, int]]]


def _as_event(e: ClusterEvent | tuple[str, int]) -> ClusterEvent:
    return e if isinstance(e, ClusterEvent) else ClusterEvent(e[0], events.ActionType(e[1]))


def is_wildcard(event: ClusterEvent) -> bool:
    return event.resource == events.WILDCARD and event.action == events.ActionType.ALL


class _InFlight:
    """What happened to a popped pod before it came back."""

    __slots__ = ("latest", "updated", "deleted")

    def __init__(self) -> None:
        self.latest: PodInfo | None = None
        self.updated = False
        self.deleted = False


class SchedulingQueue:
    def __init__(
        self,
        clock: Clock,
        less: LessFn | Callable[[Any, Any], bool] | None = None,
        pod_initial_backoff_seconds: float = DEFAULT_POD_INITIAL_BACKOFF_SECONDS,
        pod_max_backoff_seconds: float = DEFAULT_POD_MAX_BACKOFF_SECONDS,
        pod_max_in_unschedulable_pods_duration: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
        pre_enqueue_plugins: Sequence[PreEnqueuePlugin] | Mapping[str, Sequence[PreEnqueuePlugin]] = (),
        cluster_event_map: EventMap | None = None,
        rank_of: Callable[[Any], Any] | None = None,
    ) -> None:
        """`rank_of`: a queued pod's rank that `<` orders as `less` orders the pods (activeQ then
        compares ranks); `less` and `rank_of` default to PrioritySort's.
        `pre_enqueue_plugins`: one list for every pod, or lists per scheduler name.
        `cluster_event_map`: plugin name -> the events it registered (EventsToRegister). A plugin
        absent from the map is taken to care about every event, as upstream registers plugins
        without EnqueueExtensions; `None` makes every event move every pod."""
        self.clock = clock
        self.less: LessFn = less or priority_sort_less
        if less is None and rank_of is None:
            rank_of = priority_sort_rank
        self.pod_max_in_unschedulable_pods_duration = float(pod_max_in_unschedulable_pods_duration)
        self._pre_enqueue = pre_enqueue_plugins
        self._event_map: dict[str, list[ClusterEvent]] | None = (
            None if cluster_event_map is None
            else {name: [_as_event(e) for e in evs] for name, evs in cluster_event_map.items()}
        )
        self._active: KeyedHeap[QueuedPodInfo] = KeyedHeap(lambda q: q.key, self.less, rank_of)
        self._backoff = BackoffQueue(clock, pod_initial_backoff_seconds, pod_max_backoff_seconds)
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        self._in_flight: dict[str, _InFlight] = {}
        self._scheduling_cycle = 0
        self._move_request_cycle = -1
        self._registered_for: dict[ClusterEvent, bool] = {}  # event -> whether some plugin registered it
        self.nominator = Nominator()
        self.on_incoming: Callable[[str, str], None] | None = None
        """Told (queue, event) for every pod that enters activeQ ("active"), backoffQ ("backoff") or
        unschedulablePods ("unschedulable"), as scheduler_queue_incoming_pods_total counts them."""

    # -- properties -----------------------------------------------------------------------------
    @property
    def scheduling_cycle(self) -> int:
        return self._scheduling_cycle

    @property
    def move_request_cycle(self) -> int:
        return self._move_request_cycle

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return self.nominator.nominated_pods_for_node(node_name)

    # -- adding and popping ---------------------------------------------------------------------
    def add(self, pod_info: PodInfo) -> bool:
        """A new pending pod: to activeQ, or to unschedulablePods gated. True when active."""
        return self._move_to_active_q(self._new_queued(pod_info), UNSCHEDULED_POD_ADD)

    def pop(self) -> QueuedPodInfo | None:
        """The head of activeQ (None when empty); starts a scheduling cycle for it."""
        q = self._active.pop()
        if q is None:
            return None
        q.attempts += 1
        q.backoff_expiration = None
        self._scheduling_cycle += 1
        # The next failure names its own rejectors.
        q.unschedulable_plugins.clear()
        q.pending_plugins.clear()
        self._in_flight[q.uid] = _InFlight()
        return q

    def active_head(self) -> QueuedPodInfo | None:
        """The pod `pop` would return next, left in place."""
        return self._active.peek()

    def done(self, uid: str) -> None:
        """The popped pod's cycle is over (bound, or handed back)."""
        self._in_flight.pop(uid, None)

    def in_flight(self) -> list[str]:
        return list(self._in_flight)

    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo, pod_scheduling_cycle: int) -> bool:
        """Hand back a pod whose attempt failed. Rejected by plugins, it waits in unschedulablePods
        unless a move request arrived since its cycle began; failed with an error (no rejector
        plugins), it backs off. False when the pod is already queued or was deleted meanwhile."""
        flight = self._in_flight.pop(qpi.uid, None)
        key = qpi.key
        if key in self._unschedulable or self._active.has_key(key) or self._backoff.has(key):
            return False
        if flight is not None:
            if flight.deleted:
                return False
            if flight.latest is not None:
                qpi.pod_info = flight.latest
        qpi.timestamp = self.clock.now()
        qpi.backoff_expiration = None
        updated_meanwhile = flight is not None and flight.updated
        if self._move_request_cycle >= pod_scheduling_cycle or not qpi.rejector_plugins() or updated_meanwhile:
            self._move_to_backoff_q(qpi, SCHEDULE_ATTEMPT_FAILURE)
        else:
            self._unschedulable[key] = qpi
            self._incoming("unschedulable", SCHEDULE_ATTEMPT_FAILURE)
        return True

    def activate(self, pods: Iterable[PodInfo]) -> None:
        """Move these pods to activeQ now (upstream Activate), skipping any remaining backoff."""
        for pod in pods:
            q = self._unschedulable.get(pod.key)
            if q is None:
                q = self._backoff.delete(pod.key)
            if q is not None:
                self._move_to_active_q(q, FORCE_ACTIVATE)
            elif pod.uid in self._in_flight:
                # Requeue it when its attempt fails, rather than parking it.
                self._move_request_cycle = self._scheduling_cycle

    # -- updates and deletions ------------------------------------------------------------------
    def update(self, old: PodInfo | None, new: PodInfo) -> None:
        """A pending pod changed. In activeQ/backoffQ it is updated in place; in unschedulablePods
        a change beyond its status makes it worth retrying; unknown, it is added."""
        flight = self._in_flight.get(new.uid)
        if flight is not None:
            flight.latest = new
            flight.updated = flight.updated or is_pod_updated(old, new)
            if old is not None:
                self.nominator.update_nominated_pod(old, new)
            return
        if old is not None:
            q = self._active.get(old.key)
            if q is not None:
                q.pod_info = new
                self._active.add_or_update(q)  # priority may have changed: re-sift
                self.nominator.update_nominated_pod(old, new)
                return
            q = self._backoff.get(old.key)
            if q is not None:
                q.pod_info = new
                self._backoff.update(old.key, q)
                self.nominator.update_nominated_pod(old, new)
                return
        q = self._unschedulable.get(new.key)
        if q is None:
            self._move_to_active_q(self._new_queued(new), UNSCHEDULED_POD_UPDATE)
            return
        q.pod_info = new
        if old is not None:
            self.nominator.update_nominated_pod(old, new)
        if not is_pod_updated(old, new):
            return
        if self._backoff.is_backing_off(q):
            self._move_to_backoff_q(q, UNSCHEDULED_POD_UPDATE)
        else:
            self._move_to_active_q(q, UNSCHEDULED_POD_UPDATE)

    def delete(self, pod: PodInfo) -> None:
        """Forget a pending pod wherever it is (and its nomination)."""
        self.nominator.delete_nominated_pod_if_exists(pod)
        flight = self._in_flight.get(pod.uid)
        if flight is not None:
            flight.deleted = True
        if self._active.delete(pod.key) is None and self._backoff.delete(pod.key) is None:
            self._unschedulable.pop(pod.key, None)

    # -- cluster events -------------------------------------------------------------------------
    def assigned_pod_added(self, pod_info: PodInfo) -> None:
        """A pod was bound: only pods it may help (affinity to it, or a topology spread in its
        namespace) move, as upstream's AssignedPodAdded."""
        self._move_pods(self._with_cross_topology_term(pod_info), events.ASSIGNED_POD_ADD, None, pod_info)

    def assigned_pod_updated(self, old: PodInfo, new: PodInfo, event: ClusterEvent | None = None) -> None:
        """A bound pod changed: a scale-down may free room for anyone; other changes concern pods
        with cross-topology terms only. Without `event`, the events are derived from the change."""
        for evt in [event] if event is not None else assigned_pod_update_events(old, new):
            if evt.matches(_SCALE_DOWN):
                self.move_all_to_active_or_backoff_queue(evt, old, new)
            else:
                self._move_pods(self._with_cross_topology_term(new), evt, old, new)

    def pod_deleted(self, pod_info: PodInfo) -> None:
        """A pod left the cluster: a bound one frees room (AssignedPodDelete); a pending one
        leaves the queue and may unblock others (UnscheduledPodDelete)."""
        if pod_info.pod.spec.node_name:
            self.nominator.delete_nominated_pod_if_exists(pod_info)
            self.move_all_to_active_or_backoff_queue(events.ASSIGNED_POD_DELETE, pod_info, None)
            return
        self.delete(pod_info)
        self.move_all_to_active_or_backoff_queue(events.UNSCHEDULED_POD_DELETE, pod_info, None)

    def move_all_to_active_or_backoff_queue(self, event: ClusterEvent, old_obj: object = None,
                                            new_obj: object = None, pre_check: PreCheck | None = None) -> None:
        """Move every unschedulable pod that one of its rejectors registered `event` for (and
        `pre_check` accepts) to backoffQ if still backing off, else activeQ."""
        if not self._is_event_of_interest(event):
            return
        pods = [q for q in self._unschedulable.values() if pre_check is None or pre_check(q.pod_info)]
        self._move_pods(pods, event, old_obj, new_obj)

    # -- flushes --------------------------------------------------------------------------------
    def flush_backoff_q_completed(self) -> None:
        for q in self._backoff.pop_all_completed():
            self._move_to_active_q(q, BACKOFF_COMPLETE)

    def flush_unschedulable_pods_left_over(self) -> None:
        now = self.clock.now()
        stale = [q for q in self._unschedulable.values()
                 if now - q.timestamp > self.pod_max_in_unschedulable_pods_duration]
        if stale:
            self._move_pods(stale, events.UNSCHEDULABLE_TIMEOUT, None, None)

    # -- introspection --------------------------------------------------------------------------
    def next_backoff_expiry(self) -> float | None:
        """The earliest time a backoffQ pod completes backoff; None when backoffQ is empty."""
        return self._backoff.next_expiry()

    def next_unschedulable_timeout(self) -> float | None:
        """The earliest time `flush_unschedulable_pods_left_over` would move a non-gated pod
        (it moves pods strictly older than the limit, so any later instant will do)."""
        stamps = [q.timestamp for q in self._unschedulable.values() if not q.gated]
        return min(stamps) + self.pod_max_in_unschedulable_pods_duration if stamps else None

    def has_unschedulable_older_than(self, seconds: float) -> bool:
        now = self.clock.now()
        return any(now - q.timestamp > seconds for q in self._unschedulable.values() if not q.gated)

    def can_make_progress(self) -> bool:
        """Whether a pod can still be popped now or after waiting (backoff or the leftover flush);
        gated pods wait for an update, which no amount of waiting brings."""
        return bool(self._active) or bool(self._backoff) or any(
            not q.gated for q in self._unschedulable.values())

    def get(self, key: str) -> QueuedPodInfo | None:
        """The queued entry of pod `namespace/name`, wherever it waits."""
        return self._active.get(key) or self._backoff.get(key) or self._unschedulable.get(key)

    def pending_pods(self) -> PendingPods:
        unsched = [q for q in self._unschedulable.values() if not q.gated]
        gated = [q for q in self._unschedulable.values() if q.gated]
        return PendingPods(list(self._active), self._backoff.list(), unsched, gated)

    def __len__(self) -> int:
        return len(self._active) + len(self._backoff) + len(self._unschedulable)

    # -- internals ------------------------------------------------------------------------------
    def _new_queued(self, pod_info: PodInfo) -> QueuedPodInfo:
        return QueuedPodInfo(pod_info, self.clock.now())

    def _registered(self, plugin: str) -> list[ClusterEvent] | None:
        """The events `plugin` registered; None means every event."""
        if self._event_map is None:
            return None
        return self._event_map.get(plugin)

    def _plugins_for(self, q: QueuedPodInfo) -> Sequence[PreEnqueuePlugin]:
        if isinstance(self._pre_enqueue, Mapping):
            return self._pre_enqueue.get(q.pod_info.pod.spec.scheduler_name, ())
        return self._pre_enqueue

    def _run_pre_enqueue(self, q: QueuedPodInfo) -> None:
        """Sets or clears q's gating plugin; the gating plugin runs first, the first refusal wins."""
        plugins = list(self._plugins_for(q))
        if q.gating_plugin:
            plugins.sort(key=lambda pl: pl.name != q.gating_plugin)
        for pl in plugins:
            status = pl.pre_enqueue(q.pod_info)
            if status is None or status.is_success():
                continue
            q.unschedulable_plugins.add(pl.name)
            q.gating_plugin = pl.name
            q.gating_plugin_events = self._registered(pl.name)
            return
        q.gating_plugin = ""
        q.gating_plugin_events = None

    def _move_to_active_q(self, q: QueuedPodInfo, event: str) -> bool:
        self._run_pre_enqueue(q)
        key = q.key
        if q.gated:
            if not (self._active.has_key(key) or self._backoff.has(key) or key in self._unschedulable):
                self._unschedulable[key] = q
                self._incoming("unschedulable", event)
            return False
        if q.initial_attempt_timestamp is None:
            q.initial_attempt_timestamp = self.clock.now()
        self._unschedulable.pop(key, None)
        self._backoff.delete(key)
        self._active.add_or_update(q)
        self._incoming("active", event)
        if event in (UNSCHEDULED_POD_ADD, UNSCHEDULED_POD_UPDATE):
            self.nominator.add_nominated_pod(q.pod_info)
        return True

    def _move_to_backoff_q(self, q: QueuedPodInfo, event: str) -> None:
        self._unschedulable.pop(q.key, None)
        self._backoff.add(q)
        self._incoming("backoff", event)

    def _incoming(self, queue: str, event: str) -> None:
        if self.on_incoming is not None:
            self.on_incoming(queue, event)

    def unschedulable_by_plugin(self) -> dict[tuple[str, str], int]:
        """(plugin, profile) → pods in unschedulablePods that plugin rejected or left pending."""
        counts: dict[tuple[str, str], int] = {}
        for q in self._unschedulable.values():
            profile = q.pod_info.pod.spec.scheduler_name or "default-scheduler"
            for plugin in q.unschedulable_plugins | q.pending_plugins:
                counts[(plugin, profile)] = counts.get((plugin, profile), 0) + 1
        return counts

    def _is_event_of_interest(self, event: ClusterEvent) -> bool:
        if is_wildcard(event) or self._event_map is None:
            return True
        registered = self._registered_for.get(event)
        if registered is None:
            registered = self._registered_for[event] = any(
                event.matches(r) for evs in self._event_map.values() for r in evs)
        if registered:
            return True
        # A rejector that registered nothing we know of listens to everything.
        return any(p not in self._event_map for q in self._unschedulable.values() for p in q.rejector_plugins())

    def _worth_requeuing(self, q: QueuedPodInfo, event: ClusterEvent, new_obj: object) -> bool:
        rejectors = q.rejector_plugins()
        if not rejectors:
            return True
        if is_wildcard(event):
            # A wildcard event carrying a pod (ForceActivate) concerns that pod only.
            if new_obj is not None:
                uid = getattr(new_obj, "uid", None)
                return uid is not None and uid == q.uid
            return True
        for plugin in rejectors:
            registered = self._registered(plugin)
            if registered is None or any(event.matches(r) for r in registered):
                return True
        return False

    def _move_pods(self, pods: Iterable[QueuedPodInfo], event: ClusterEvent, old_obj: object,
                   new_obj: object) -> None:
        if not self._is_event_of_interest(event):
            return
        for q in pods:
            if q.gated and q.gating_plugin_events is not None and not any(
                    event.matches(r) for r in q.gating_plugin_events):
                continue  # the gate's plugin does not care about this event
            if not self._worth_requeuing(q, event, new_obj):
                continue
            self._unschedulable.pop(q.key, None)
            if self._backoff.is_backing_off(q):
                self._move_to_backoff_q(q, event.label)
            else:
                self._move_to_active_q(q, event.label)
        self._move_request_cycle = self._scheduling_cycle

    def _with_cross_topology_term(self, pod: PodInfo) -> list[QueuedPodInfo]:
        """Unschedulable pods that `pod` may help: rejected by PodTopologySpread in its namespace,
        or with a required pod affinity term selecting it."""
        out: list[QueuedPodInfo] = []
        for q in self._unschedulable.values():
            info = q.pod_info
            if POD_TOPOLOGY_SPREAD in q.unschedulable_plugins and info.namespace == pod.namespace:
                out.append(q)
            elif any(term.matches(pod) for term in info.required_affinity_terms):
                out.append(q)
        return out


__all__ = [
    "DEFAULT_POD_INITIAL_BACKOFF_SECONDS", "DEFAULT_POD_MAX_BACKOFF_SECONDS",
    "DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION", "SchedulingQueue", "is_wildcard",
]
