"""The cluster as it was at a moment: the read model folded from the events stamped up to then."""

from __future__ import annotations

from datetime import datetime

import msgspec

from shared.framework.node_info import node_allocatable
from shared.framework.pod_info import PodInfo
from shared.projection import ReadModel, derive_pod, fold

from .history import History


class NodeState(msgspec.Struct, kw_only=True):
    name: str
    pods: int
    cpu_requested_milli: int
    memory_requested: int
    cpu_allocatable_milli: int
    memory_allocatable: int


class PodState(msgspec.Struct, kw_only=True, omit_defaults=True):
    pod: str
    phase: str
    node: str = ""
    nominated_node: str = ""
    attempts: int = 0
    message: str = ""


class ClusterAt(msgspec.Struct, kw_only=True):
    at: datetime
    events: int
    nodes: list[NodeState]
    pods: list[PodState]
    queue: list[PodState]
    """Pods waiting to be scheduled, in submission order, with their last attempt's reason."""


def cluster_at(history: History, when: datetime) -> ClusterAt:
    events = history.until(when)
    model: ReadModel = fold(e.envelope for e in events)
    pods = [derive_pod(row) for row in model.pods.values() if row.pod is not None and not row.deleted]
    pods.sort(key=lambda r: (r.submitted_at or when, r.namespace, r.name))
    requested: dict[str, list[int]] = {}
    for row in pods:
        if row.phase == "Bound" and row.pod is not None:  # scheduled, or created on its node and admitted
            r = PodInfo(row.pod).requests
            totals = requested.setdefault(row.node_name, [0, 0, 0])
            totals[0] += 1
            totals[1] += r.milli_cpu
            totals[2] += r.memory
    nodes = []
    for name, node_row in model.nodes.items():
        alloc = node_allocatable(node_row.node)
        count, cpu, mem = requested.get(name, [0, 0, 0])
        nodes.append(NodeState(name=name, pods=count, cpu_requested_milli=cpu, memory_requested=mem,
                               cpu_allocatable_milli=alloc.milli_cpu, memory_allocatable=alloc.memory))
    states = [PodState(pod=f"{r.namespace}/{r.name}", phase=r.phase, node=r.node_name,
                       nominated_node=r.nominated_node_name, attempts=r.last_attempt, message=r.message or "")
              for r in pods]
    queue = [s for s, r in zip(states, pods) if not r.node_name and r.phase == "Pending"]
    return ClusterAt(at=when, events=len(events), nodes=nodes, pods=states, queue=queue)

