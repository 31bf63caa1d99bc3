"""Builders the InterPodAffinity filtering and scoring tests share: label-selector expressions,
affinity terms, pods, snapshots (upstream's namespace fixture included) and the plugin."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from shared.framework.namespaces import NamespaceLabels
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.snapshot import Snapshot
from shared.model import Namespace, ObjectMeta
from shared.plugins.interpodaffinity import InterPodAffinity
from tests.builders import MakeNode, MakePod


def exists(key: str) -> dict[str, Any]:
    return {"key": key, "operator": "Exists"}


def not_exists(key: str) -> dict[str, Any]:
    return {"key": key, "operator": "DoesNotExist"}


def in_(key: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": "In", "values": list(values)}


def not_in(key: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": "NotIn", "values": list(values)}


def term(topology_key: str, *exprs: dict[str, Any], namespaces: list[str] | None = None,
         namespace_selector: dict[str, Any] | None = None) -> dict[str, Any]:
    return MakePod.term(topology_key, match_expressions=list(exprs), namespaces=namespaces,
                        namespace_selector=namespace_selector)


def pod(labels: Mapping[str, str] | None = None, node: str = "", ns: str = "default", name: str = "") -> MakePod:
    p = MakePod().namespace(ns)
    if name:
        p.name(name)
    if labels:
        p.labels(dict(labels))
    if node:
        p.node(node)
    return p


class FakeHandle:
    def __init__(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot

    def snapshot(self) -> Snapshot:
        return self._snapshot


TEAM_NAMESPACES = [Namespace(metadata=ObjectMeta(name=name, labels={"team": team}))
                   for name, team in (("subteam1.team1", "team1"), ("subteam2.team1", "team1"),
                                      ("subteam1.team2", "team2"), ("subteam2.team2", "team2"))]
"""Upstream's namespace fixture: two teams of two namespaces, labelled with their team."""


def snapshot(nodes: Mapping[str, Mapping[str, str]], pods: Sequence[MakePod],
             namespaces: Sequence[Namespace] = TEAM_NAMESPACES) -> Snapshot:
    infos: dict[str, NodeInfo] = {name: MakeNode().name(name).labels(dict(labels)).info()
                                  for name, labels in nodes.items()}
    for i, p in enumerate(pods):
        if not p.raw()["metadata"]["name"]:
            p.name(f"existing-{i}")
        obj = p.obj()
        info = infos.get(obj.spec.node_name or "")
        if info is not None:
            info.add_pod(PodInfo(obj))
    return Snapshot(list(infos.values()), NamespaceLabels(namespaces))


def plugin(snap: Snapshot, args: Mapping[str, Any] | None = None) -> InterPodAffinity:
    return InterPodAffinity.new(args, FakeHandle(snap))  # type: ignore[arg-type]  # a stand-in: only its snapshot is read
