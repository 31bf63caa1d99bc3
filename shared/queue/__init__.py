"""The scheduling queue (activeQ, backoffQ, unschedulablePods) and the nominator, driven by an
injected clock."""

from .backoff import BackoffQueue
from .clock import Clock, FakeClock, MonotonicClock
from .nominator import Nominator
from .pending import PendingPods
from .pod_changes import assigned_pod_update_events, is_pod_updated
from .queued_pod_info import LessFn, QueuedPodInfo, priority_sort_less
from .scheduling_queue import (
    DEFAULT_POD_INITIAL_BACKOFF_SECONDS,
    DEFAULT_POD_MAX_BACKOFF_SECONDS,
    DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
    SchedulingQueue,
    is_wildcard,
)

__all__ = [
    "DEFAULT_POD_INITIAL_BACKOFF_SECONDS", "DEFAULT_POD_MAX_BACKOFF_SECONDS",
    "DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION", "BackoffQueue", "Clock", "FakeClock", "LessFn",
    "MonotonicClock", "Nominator", "PendingPods", "QueuedPodInfo", "SchedulingQueue",
    "assigned_pod_update_events", "is_pod_updated", "is_wildcard", "priority_sort_less",
]
