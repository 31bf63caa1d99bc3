"""The scheduling-relevant subset of core/v1 Node."""

from __future__ import annotations

from .base import K8s
from .meta import ObjectMeta
from .pod import Quantity


class Taint(K8s, frozen=True, kw_only=True):
    key: str
    value: str = ""
    effect: str = ""
    time_added: str | None = None


class NodeSpec(K8s, frozen=True, kw_only=True):
    unschedulable: bool = False
    taints: list[Taint] = []
    provider_id: str = ""


class ContainerImage(K8s, frozen=True, kw_only=True):
    names: list[str] = []
    size_bytes: int = 0


class NodeCondition(K8s, frozen=True, kw_only=True):
    type: str
    status: str
    reason: str = ""
    message: str = ""


class NodeStatus(K8s, frozen=True, kw_only=True):
    capacity: dict[str, Quantity] = {}
    allocatable: dict[str, Quantity] = {}
    images: list[ContainerImage] = []
    conditions: list[NodeCondition] = []


class Node(K8s, frozen=True, kw_only=True):
    api_version: str = "v1"
    kind: str = "Node"
    metadata: ObjectMeta = ObjectMeta()
    spec: NodeSpec = NodeSpec()
    status: NodeStatus = NodeStatus()

    @property
    def name(self) -> str:
        return self.metadata.name
