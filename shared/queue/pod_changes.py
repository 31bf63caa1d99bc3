"""How an updated pod differs from its previous version, as the queue needs to know.

- `is_pod_updated`: upstream's isPodUpdated — anything but status and resourceVersion changed,
  i.e. a change that may make an unschedulable pod schedulable.
- `assigned_pod_update_events`: the specific events an update of a bound pod amounts to
  (upstream framework.PodSchedulingPropertiesChange), so the queue moves only the pods that
  care about that kind of change.
"""

from __future__ import annotations

import msgspec

from shared.framework import events
from shared.framework.events import ActionType, ClusterEvent
from shared.framework.pod_info import PodInfo
from shared.model import Pod, PodStatus

# Labels upstream gives the queue's own transitions (framework/types.go and events.go).
UNSCHEDULED_POD_ADD = "UnscheduledPodAdd"
UNSCHEDULED_POD_UPDATE = "UnscheduledPodUpdate"
SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
BACKOFF_COMPLETE = "BackoffComplete"
FORCE_ACTIVATE = "ForceActivate"

_EMPTY_STATUS = PodStatus()


def _strip(pod: Pod) -> Pod:
    meta = msgspec.structs.replace(pod.metadata, resource_version="")
    return msgspec.structs.replace(pod, metadata=meta, status=_EMPTY_STATUS)


def is_pod_updated(old: PodInfo | None, new: PodInfo) -> bool:
    if old is None:
        return True
    return _strip(old.pod) != _strip(new.pod)


def _scaled_down(old: PodInfo, new: PodInfo) -> bool:
    """Whether any request went down (freeing room on the node)."""
    o, n = old.requests, new.requests
    if n.milli_cpu < o.milli_cpu or n.memory < o.memory or n.ephemeral_storage < o.ephemeral_storage:
        return True
    return any(n.scalar.get(k, 0) < v for k, v in o.scalar.items())


def assigned_pod_update_events(old: PodInfo, new: PodInfo) -> list[ClusterEvent]:
    """The update events of a bound pod; a generic Pod/Update when no specific one applies."""
    out: list[ClusterEvent] = []
    if old.labels != new.labels:
        out.append(ClusterEvent(events.ASSIGNED_POD, ActionType.UPDATE_POD_LABEL, "AssignedPodUpdate"))
    if _scaled_down(old, new):
        out.append(ClusterEvent(events.ASSIGNED_POD, ActionType.UPDATE_POD_SCALE_DOWN, "AssignedPodUpdate"))
    if old.pod.spec.tolerations != new.pod.spec.tolerations:
        out.append(ClusterEvent(events.ASSIGNED_POD, ActionType.UPDATE_POD_TOLERATION, "AssignedPodUpdate"))
    return out or [ClusterEvent(events.ASSIGNED_POD, ActionType.UPDATE, "AssignedPodUpdate")]


__all__ = [
    "BACKOFF_COMPLETE", "FORCE_ACTIVATE", "SCHEDULE_ATTEMPT_FAILURE", "UNSCHEDULED_POD_ADD",
    "UNSCHEDULED_POD_UPDATE", "assigned_pod_update_events", "is_pod_updated",
]
