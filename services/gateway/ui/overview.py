"""The overview's data: every node with what is requested of it, the pod counts, and the pending pods
with their reasons. Pure: summaries in, a JSON-ready dict out. The routes keep the summaries between
polls (`node_summary` when a node's row changes, `pod_requests` once per pod: a pod never changes)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from shared.framework.node_info import node_allocatable
from shared.framework.pod_info import PodInfo
from shared.projection import NodeRow, PodRow, PodState

ZONE = "topology.kubernetes.io/zone"
PENDING_SHOWN = 500
"""Pending pods listed on the page (all are counted)."""


@dataclass(frozen=True, slots=True)
class NodeSummary:
    name: str
    labels: Mapping[str, str]
    cpu: int
    """Allocatable millicores."""
    memory: int
    pods: int
    taints: int
    unschedulable: bool


def node_summary(row: NodeRow) -> NodeSummary:
    alloc = node_allocatable(row.node)
    return NodeSummary(row.name, dict(row.node.metadata.labels), alloc.milli_cpu, alloc.memory,
                       alloc.allowed_pod_number, len(row.node.spec.taints), row.node.spec.unschedulable)


def pod_requests(row: PodRow) -> tuple[int, int]:
    """The pod's CPU (millicores) and memory requests, as the scheduler counts them."""
    if row.pod is None:
        return (0, 0)
    info = PodInfo(row.pod)
    return (info.requests.milli_cpu, info.requests.memory)


def overview(nodes: Sequence[NodeSummary], pods: Sequence[PodState], requests: Mapping[str, tuple[int, int]], *,
             group_by: str = ZONE) -> dict[str, Any]:
    used: dict[str, list[int]] = {}
    counts = {"bound": 0, "pending": 0, "failed": 0, "preempted": 0}
    pending: list[dict[str, str]] = []
    for p in pods:
        if p.preempted_by:
            counts["preempted"] += 1
        if p.deleted:
            continue
        if p.phase == "Failed":  # created on a node that refused it: it takes nothing there
            counts["failed"] += 1
            continue
        if p.node_name and p.phase != "Pending":
            counts["bound"] += 1
            cpu, memory = requests.get(p.uid, (0, 0))
            cell = used.setdefault(p.node_name, [0, 0, 0])
            cell[0] += cpu
            cell[1] += memory
            cell[2] += 1
        else:
            counts["pending"] += 1
            if len(pending) < PENDING_SHOWN:
                pending.append({"namespace": p.namespace, "name": p.name, "message": p.message or ""})
    out_nodes = []
    for n in sorted(nodes, key=lambda n: n.name):
        cpu, memory, count = used.get(n.name, [0, 0, 0])
        out_nodes.append({"name": n.name, "group": n.labels.get(group_by, ""), "cpu": [cpu, n.cpu],
                          "memory": [memory, n.memory], "pods": [count, n.pods], "taints": n.taints,
                          "unschedulable": n.unschedulable})
    pending.sort(key=lambda p: (p["namespace"], p["name"]))
    return {"groupBy": group_by, "counts": counts, "nodes": out_nodes, "pending": pending}


def fullness(node: dict[str, Any]) -> float:
    """The fullest of the node's resources, 0..1 (or more when over-committed)."""
    shares = [used / total for used, total in (node["cpu"], node["memory"], node["pods"]) if total]
    return max(shares, default=0.0)
