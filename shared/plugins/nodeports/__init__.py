"""NodePorts: the host ports a pod asks for must be free on the node (same protocol and port on
the same IP, where 0.0.0.0 overlaps every IP)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from shared.framework import events
from shared.framework.cycle_state import CycleState
from shared.framework.host_ports import HostPortInfo
from shared.framework.interfaces import EnqueueExtensions, FilterPlugin, Handle, PreFilterPlugin, PreFilterResult
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.status import SKIP, Code, Status
from shared.model import Pod
from shared.plugins import names

ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
PRE_FILTER_STATE_KEY = "PreFilter" + names.NODE_PORTS

HostPort = tuple[str, str, int]  # (hostIP, protocol, hostPort)


def host_ports(pod: Pod) -> tuple[HostPort, ...]:
    """util.GetHostPorts: ports with hostPort > 0 of restartable init containers (sidecars run
    for the pod's lifetime) and of the regular containers."""
    out: list[HostPort] = []
    for c in pod.spec.init_containers:
        if c.restart_policy != "Always":
            continue
        out.extend((p.host_ip, p.protocol, p.host_port) for p in c.ports if p.host_port > 0)
    for c in pod.spec.containers:
        out.extend((p.host_ip, p.protocol, p.host_port) for p in c.ports if p.host_port > 0)
    return tuple(out)


def fits_ports(want: Sequence[HostPort], used: HostPortInfo) -> bool:
    for ip, protocol, port in want:
        if used.check_conflict(ip, protocol, port):
            return False
    return True


class _PreFilterState:
    __slots__ = ("ports",)

    def __init__(self, ports: tuple[HostPort, ...]) -> None:
        self.ports = ports

    def clone(self) -> _PreFilterState:
        return self  # other pods never change what this pod asks for


class NodePorts(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    NAME = names.NODE_PORTS
    NODE_LOCAL = True

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> NodePorts:
        return cls()

    def events_to_register(self) -> list[events.ClusterEvent]:
        # Container ports are immutable, so only a bound pod going away or a new node helps.
        return [
            events.ClusterEvent(events.ASSIGNED_POD, events.ActionType.DELETE),
            events.ClusterEvent(events.NODE, events.ActionType.ADD),
        ]

    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        ports = host_ports(pod.pod)
        if not ports:
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(ports))
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, _PreFilterState):
            return Status(Code.ERROR, f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        if fits_ports(s.ports, node_info.used_ports):
            return None
        return Status(Code.UNSCHEDULABLE, ERR_REASON)


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """Whether the pod's host ports are free on the node (upstream nodeports.Fits)."""
    return fits_ports(host_ports(pod), node_info.used_ports)


__all__ = ["ERR_REASON", "NodePorts", "fits", "fits_ports", "host_ports"]
