"""extender/v1 wire types with upstream's JSON names (the Go structs carry no json tags, so the
keys are the Go field names: "Pod", "NodeNames", "FailedNodes", "NumPDBViolations", "UID", ...).
Nodes travel as a v1 NodeList ({"kind": "NodeList", "items": [...]}), pods as v1 Pods."""

from __future__ import annotations

import msgspec

from shared.model import Node, Pod


class _Wire(msgspec.Struct, kw_only=True, rename="pascal", omit_defaults=True):
    """Unset (None) fields are left out, as Go's nil pointers would be read back."""


class NodeList(msgspec.Struct, kw_only=True):
    api_version: str = msgspec.field(default="v1", name="apiVersion")
    kind: str = "NodeList"
    items: list[Node] = []


class ExtenderArgs(_Wire):
    pod: Pod | None = None
    nodes: NodeList | None = None
    node_names: list[str] | None = None


class ExtenderFilterResult(_Wire):
    nodes: NodeList | None = None
    node_names: list[str] | None = None
    failed_nodes: dict[str, str] | None = None
    failed_and_unresolvable_nodes: dict[str, str] | None = None
    error: str = ""


class HostPriority(_Wire):
    host: str = ""
    score: int = 0


class MetaPod(_Wire):
    uid: str = msgspec.field(default="", name="UID")


class Victims(_Wire):
    pods: list[Pod] = []
    num_pdb_violations: int = msgspec.field(default=0, name="NumPDBViolations")


class MetaVictims(_Wire):
    pods: list[MetaPod] = []
    num_pdb_violations: int = msgspec.field(default=0, name="NumPDBViolations")


class ExtenderPreemptionArgs(_Wire):
    pod: Pod | None = None
    node_name_to_victims: dict[str, Victims] | None = None
    node_name_to_meta_victims: dict[str, MetaVictims] | None = None


class ExtenderPreemptionResult(_Wire):
    node_name_to_meta_victims: dict[str, MetaVictims | None] | None = None


class ExtenderBindingArgs(_Wire):
    pod_name: str = ""
    pod_namespace: str = ""
    pod_uid: str = msgspec.field(default="", name="PodUID")
    node: str = ""


class ExtenderBindingResult(_Wire):
    error: str = ""


__all__ = [
    "ExtenderArgs",
    "ExtenderBindingArgs",
    "ExtenderBindingResult",
    "ExtenderFilterResult",
    "ExtenderPreemptionArgs",
    "ExtenderPreemptionResult",
    "HostPriority",
    "MetaPod",
    "MetaVictims",
    "NodeList",
    "Victims",
]
