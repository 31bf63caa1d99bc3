"""Builders the resource-scoring tests share, in upstream's shape: pods with one container per
request map, nodes with a capacity map, and capacity maps."""

from __future__ import annotations

from typing import Any

from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from tests.builders import MakeNode, MakePod


def pod(*reqs: dict[str, Any], node: str = "") -> PodInfo:
    """Like upstream's st.MakePod().Req(..): one container per request map, none when no map."""
    b = MakePod().name("p")
    if node:
        b.node(node)
    for req in reqs:
        b.res(req)
    return b.info(default_container=False, default_uid=False)


def node(name: str, capacity: dict[str, str], *pods: PodInfo) -> NodeInfo:
    return MakeNode().name(name).capacity(capacity).info(*pods)


def cm(cpu: str, memory: str, **extra: str) -> dict[str, str]:
    return {"cpu": cpu, "memory": memory, **extra}
