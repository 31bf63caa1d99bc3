"""Pure translation between Berth's scheduling objects and the extender/v1 wire types, with
upstream's (pkg/scheduler/extender.go) checks on what an extender answers."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Protocol, TypeVar

from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo

from .types import (
    ExtenderArgs,
    ExtenderFilterResult,
    ExtenderPreemptionArgs,
    ExtenderPreemptionResult,
    HostPriority,
    MetaPod,
    MetaVictims,
    NodeList,
    Victims,
)


class ExtenderError(Exception):
    """An extender could not be reached, answered an error, or answered something inconsistent."""


class PodVictims(Protocol):
    """What `preemption_args` reads of one node's victims (preemption's `Victims`)."""

    @property
    def pods(self) -> Sequence[PodInfo]: ...

    @property
    def num_pdb_violations(self) -> int: ...


V = TypeVar("V")


class PodsOnNode(Protocol):
    """What `preemption_result` reads of a node: the pods on it (a NodeInfo, or the victims sent)."""

    @property
    def pods(self) -> Sequence[PodInfo]: ...


def interested(pod: PodInfo, managed_resources: Collection[str]) -> bool:
    """Upstream IsInterested: every pod when no resource is managed, otherwise only pods whose
    containers or init containers request or limit a managed resource."""
    if not managed_resources:
        return True
    spec = pod.pod.spec
    for container in (*spec.containers, *spec.init_containers):
        res = container.resources
        if any(name in managed_resources for name in (*res.requests, *res.limits)):
            return True
    return False


def filter_args(pod: PodInfo, nodes: Sequence[NodeInfo], node_cache_capable: bool) -> ExtenderArgs:
    """Node names for a nodeCacheCapable extender, whole Node objects otherwise."""
    if node_cache_capable:
        return ExtenderArgs(pod=pod.pod, node_names=[n.name for n in nodes])
    return ExtenderArgs(pod=pod.pod, nodes=NodeList(items=[n.node for n in nodes]))


def filter_result(
    extender: str, result: ExtenderFilterResult, nodes: Sequence[NodeInfo], node_cache_capable: bool
) -> tuple[list[NodeInfo], dict[str, str], dict[str, str]]:
    """(kept nodes in the extender's order, failed, failed and unresolvable). A node the extender
    keeps that was not sent is an error, as is a non-empty Error field."""
    if result.error:
        raise ExtenderError(result.error)
    by_name = {n.name: n for n in nodes}
    names: list[str] = []
    if node_cache_capable and result.node_names is not None:
        names = list(result.node_names)
    elif result.nodes is not None:
        names = [n.metadata.name for n in result.nodes.items]
    kept: list[NodeInfo] = []
    for name in names:
        info = by_name.get(name)
        if info is None:
            raise ExtenderError(
                f"extender {extender!r} claims a filtered node {name!r} which is not found in the input node list")
        kept.append(info)
    return kept, dict(result.failed_nodes or {}), dict(result.failed_and_unresolvable_nodes or {})


def prioritize_result(result: Sequence[HostPriority]) -> dict[str, int]:
    return {hp.host: hp.score for hp in result}


def preemption_args(
    pod: PodInfo, node_to_victims: Mapping[str, PodVictims], node_cache_capable: bool
) -> ExtenderPreemptionArgs:
    """Victims' UIDs for a nodeCacheCapable extender (MetaVictims), whole Pods otherwise."""
    if node_cache_capable:
        meta = {
            node: MetaVictims(pods=[MetaPod(uid=p.uid) for p in v.pods], num_pdb_violations=v.num_pdb_violations)
            for node, v in node_to_victims.items()
        }
        return ExtenderPreemptionArgs(pod=pod.pod, node_name_to_meta_victims=meta)
    full = {
        node: Victims(pods=[p.pod for p in v.pods], num_pdb_violations=v.num_pdb_violations)
        for node, v in node_to_victims.items()
    }
    return ExtenderPreemptionArgs(pod=pod.pod, node_name_to_victims=full)


def preemption_result(
    extender: str, result: ExtenderPreemptionResult, node_info: Callable[[str], PodsOnNode | None],
    victims: Callable[[list[PodInfo], int], V],
) -> dict[str, V]:
    """Upstream convertToVictims: each UID is looked up among the pods running on its node;
    `victims(pods, pdb_violations)` makes each node's answer (preemption's `Victims`)."""
    out: dict[str, V] = {}
    for node_name, meta in (result.node_name_to_meta_victims or {}).items():
        info = node_info(node_name)
        if info is None:
            raise ExtenderError(f'nodeinfo not found for node name "{node_name}"')
        if meta is None:
            out[node_name] = victims([], 0)
            continue
        by_uid: dict[str, PodInfo] = {p.uid: p for p in info.pods}
        pods: list[PodInfo] = []
        for mp in meta.pods:
            found = by_uid.get(mp.uid)
            if found is None:
                raise ExtenderError(
                    f"extender: {extender} claims to preempt pod (UID: {mp.uid}) on node: {node_name}, "
                    "but the pod is not on the node")
            pods.append(found)
        out[node_name] = victims(pods, meta.num_pdb_violations)
    return out


__all__ = [
    "ExtenderError", "PodVictims", "PodsOnNode", "filter_args", "filter_result", "interested", "preemption_args",
    "preemption_result", "prioritize_result",
]
