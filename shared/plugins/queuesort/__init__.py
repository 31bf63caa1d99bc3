"""PrioritySort: the active queue pops higher priority first, then the earlier-queued pod."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from functools import lru_cache
from typing import Any, Protocol

from shared.framework.interfaces import Handle, QueueSortPlugin
from shared.framework.pod_info import PodInfo
from shared.plugins import names

# A pod that has not started counts as starting "now", i.e. after every recorded start.
NOT_STARTED = float("inf")


class QueuedPod(Protocol):
    pod_info: PodInfo
    timestamp: float


class PrioritySort(QueueSortPlugin):
    NAME = names.PRIORITY_SORT

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> PrioritySort:
        return cls()

    def less(self, a: Any, b: Any) -> bool:
        p1 = a.pod_info.priority
        p2 = b.pod_info.priority
        return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)

    def rank_of(self) -> Callable[[Any], Any] | None:
        # A subclass ordering pods its own way has no rank unless it gives one.
        return _rank if type(self).less is PrioritySort.less else None


def _rank(q: Any) -> tuple[int, float]:
    # (-priority, timestamp) < (-priority', timestamp') exactly when `less` holds.
    return -q.pod_info.priority, q.timestamp


@lru_cache(maxsize=8192)
def _parse_time(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def pod_start_time(pod: PodInfo) -> float:
    """status.startTime in epoch seconds; NOT_STARTED when absent or unreadable."""
    if not pod.start_time:
        return NOT_STARTED
    try:
        return _parse_time(pod.start_time)
    except ValueError:
        return NOT_STARTED


def more_important_pod(a: PodInfo, b: PodInfo) -> bool:
    """util.MoreImportantPod: higher priority, then the earlier start time."""
    if a.priority != b.priority:
        return a.priority > b.priority
    return pod_start_time(a) < pod_start_time(b)


__all__ = ["NOT_STARTED", "PrioritySort", "QueuedPod", "more_important_pod", "pod_start_time"]
