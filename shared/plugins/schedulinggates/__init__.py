"""SchedulingGates: a pod with spec.schedulingGates waits outside the active queue."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.framework import events
from shared.framework.interfaces import EnqueueExtensions, Handle, PreEnqueuePlugin
from shared.framework.pod_info import PodInfo
from shared.framework.status import Code, Status
from shared.plugins import names


def gates_message(gates: list[str]) -> str:
    """Go's %v of a []string: space-separated inside brackets."""
    return f"waiting for scheduling gates: [{' '.join(gates)}]"


class SchedulingGates(PreEnqueuePlugin, EnqueueExtensions):
    NAME = names.SCHEDULING_GATES

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> SchedulingGates:
        return cls()

    def events_to_register(self) -> list[events.ClusterEvent]:
        return [events.ClusterEvent(events.POD, events.ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)]

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        gates = pod.pod.spec.scheduling_gates
        if not gates:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, gates_message([g.name for g in gates]))


__all__ = ["SchedulingGates", "gates_message"]
