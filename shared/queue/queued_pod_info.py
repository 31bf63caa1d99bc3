"""QueuedPodInfo: a pod plus the bookkeeping the scheduling queue keeps about it."""

from __future__ import annotations

from collections.abc import Callable

from shared.framework.events import ClusterEvent
from shared.framework.pod_info import PodInfo

LessFn = Callable[["QueuedPodInfo", "QueuedPodInfo"], bool]


class QueuedPodInfo:
    """Upstream framework.QueuedPodInfo.

    - timestamp: when the pod was added or last re-added to the queue; PrioritySort orders by it and
      backoff is counted from it.
    - initial_attempt_timestamp: when the pod first entered activeQ (None while never active).
    - attempts: how many times the pod has been popped for a scheduling cycle.
    - unschedulable_plugins / pending_plugins: who rejected the last attempt; cleared at each pop.
    - gating_plugin / gating_plugin_events: the PreEnqueue plugin that keeps the pod out of activeQ
      and the events it registered; `gated` is derived from them.
    - backoff_expiration: cached expiry, reset when the pod is popped or re-added after a failure.
    """

    __slots__ = (
        "pod_info", "timestamp", "initial_attempt_timestamp", "attempts", "unschedulable_plugins",
        "pending_plugins", "gating_plugin", "gating_plugin_events", "backoff_expiration",
    )

    def __init__(self, pod_info: PodInfo, timestamp: float, unschedulable_plugins: set[str] | None = None) -> None:
        self.pod_info = pod_info
        self.timestamp = timestamp
        self.initial_attempt_timestamp: float | None = None
        self.attempts = 0
        self.unschedulable_plugins: set[str] = set(unschedulable_plugins or ())
        self.pending_plugins: set[str] = set()
        self.gating_plugin = ""
        self.gating_plugin_events: list[ClusterEvent] | None = None
        self.backoff_expiration: float | None = None

    @property
    def gated(self) -> bool:
        return self.gating_plugin != ""

    @property
    def key(self) -> str:
        """namespace/name: how upstream keys pods in its queues."""
        return self.pod_info.key

    @property
    def uid(self) -> str:
        return self.pod_info.uid

    def rejector_plugins(self) -> set[str]:
        return self.unschedulable_plugins | self.pending_plugins

    def __repr__(self) -> str:
        return (f"QueuedPodInfo({self.pod_info.key}, ts={self.timestamp}, attempts={self.attempts}, "
                f"unschedulable={sorted(self.unschedulable_plugins)}, gated={self.gated})")


def priority_sort_less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    """PrioritySort's Less: higher priority first, then the earlier timestamp."""
    p1 = a.pod_info.priority
    p2 = b.pod_info.priority
    return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)


def priority_sort_rank(q: QueuedPodInfo) -> tuple[int, float]:
    """PrioritySort's rank: `<` orders two ranks as `priority_sort_less` orders their pods."""
    return -q.pod_info.priority, q.timestamp


__all__ = ["LessFn", "QueuedPodInfo", "priority_sort_less", "priority_sort_rank"]
