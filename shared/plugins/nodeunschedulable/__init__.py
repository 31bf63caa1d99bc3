"""NodeUnschedulable: a cordoned node (spec.unschedulable) takes only pods tolerating the
node.kubernetes.io/unschedulable:NoSchedule taint."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.framework import events
from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import EnqueueExtensions, FilterPlugin, Handle
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.status import Code, Status
from shared.model import Taint
from shared.plugins import names
from shared.plugins.tainttoleration.helpers import NO_SCHEDULE, TAINT_NODE_UNSCHEDULABLE, tolerations_tolerate_taint

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
ERR_REASON_UNKNOWN_CONDITION = "node(s) had unknown conditions"

_UNSCHEDULABLE_TAINT = Taint(key=TAINT_NODE_UNSCHEDULABLE, effect=NO_SCHEDULE)


class NodeUnschedulable(FilterPlugin, EnqueueExtensions):
    NAME = names.NODE_UNSCHEDULABLE
    NODE_LOCAL = True

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> NodeUnschedulable:
        return cls()

    def events_to_register(self) -> list[events.ClusterEvent]:
        A = events.ActionType
        return [
            events.ClusterEvent(events.NODE, A.ADD | A.UPDATE_NODE_TAINT),
            events.ClusterEvent(events.POD, A.UPDATE_POD_TOLERATION),
        ]

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if not node_info.unschedulable:
            return None
        if tolerations_tolerate_taint(pod.pod.spec.tolerations, _UNSCHEDULABLE_TAINT):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)


__all__ = ["ERR_REASON_UNKNOWN_CONDITION", "ERR_REASON_UNSCHEDULABLE", "NodeUnschedulable"]
