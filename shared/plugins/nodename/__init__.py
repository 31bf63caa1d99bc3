"""NodeName: a pod naming spec.nodeName fits only that node."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from shared.framework import events
from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import EnqueueExtensions, FilterPlugin, Handle, PreFilterPlugin, PreFilterResult
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.status import Code, Status
from shared.plugins import names

ERR_REASON = "node(s) didn't match the requested node name"


def fits(pod: PodInfo, node_info: NodeInfo) -> bool:
    node_name = pod.pod.spec.node_name
    return not node_name or node_name == node_info.name


class NodeName(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    NAME = names.NODE_NAME
    NODE_LOCAL = True

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> NodeName:
        return cls()

    def events_to_register(self) -> list[events.ClusterEvent]:
        return [events.ClusterEvent(events.NODE, events.ActionType.ADD)]

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        node_name = pod.pod.spec.node_name
        if node_name:
            return PreFilterResult({node_name}), None
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if fits(pod, node_info):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)


__all__ = ["ERR_REASON", "NodeName", "fits"]
