"""The overview's data, from the read model: every node with what is requested of it, the pod counts,
and the pending pods with their reasons. Pure: rows in, a JSON-ready dict out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shared.framework.node_info import node_allocatable
from shared.framework.pod_info import PodInfo
from shared.projection import NodeRow, PodRow

ZONE = "topology.kubernetes.io/zone"
PENDING_SHOWN = 500
"""Pending pods listed on the page (all are counted)."""


def overview(nodes: Sequence[NodeRow], pods: Sequence[PodRow], *, group_by: str = ZONE) -> dict[str, Any]:
    used: dict[str, list[int]] = {}
    counts = {"bound": 0, "pending": 0, "preempted": 0}
    pending: list[dict[str, str]] = []
    for row in pods:
        if row.pod is None or not row.name:
            continue
        if row.preempted_by:
            counts["preempted"] += 1
        if row.deleted:
            continue
        if row.node_name:
            counts["bound"] += 1
            info = PodInfo(row.pod)
            cell = used.setdefault(row.node_name, [0, 0, 0])
            cell[0] += info.requests.milli_cpu
            cell[1] += info.requests.memory
            cell[2] += 1
        else:
            counts["pending"] += 1
            if len(pending) < PENDING_SHOWN:
                pending.append({"namespace": row.namespace, "name": row.name, "message": row.message or ""})
    out_nodes = []
    for row in nodes:
        alloc = node_allocatable(row.node)
        cpu, memory, count = used.get(row.name, [0, 0, 0])
        labels = row.node.metadata.labels
        out_nodes.append({
            "name": row.name, "group": labels.get(group_by, ""),
            "cpu": [cpu, alloc.milli_cpu], "memory": [memory, alloc.memory], "pods": [count, alloc.allowed_pod_number],
            "taints": len(row.node.spec.taints), "unschedulable": row.node.spec.unschedulable,
        })
    return {"groupBy": group_by, "counts": counts, "nodes": out_nodes, "pending": pending}


def fullness(node: dict[str, Any]) -> float:
    """The fullest of the node's resources, 0..1 (or more when over-committed)."""
    shares = [used / total for used, total in (node["cpu"], node["memory"], node["pods"]) if total]
    return max(shares, default=0.0)
