"""The web view's overview data: what each node's pods request, the counts, the pending reasons."""

from __future__ import annotations

from datetime import UTC, datetime

from services.gateway.ui.overview import fullness, overview
from shared.projection import NodeRow, PodRow
from tests.builders import MakeNode, MakePod

NOW = datetime(2026, 11, 26, tzinfo=UTC)


def _node(name: str, zone: str) -> NodeRow:
    node = MakeNode().name(name).label("topology.kubernetes.io/zone", zone).capacity(cpu="4", memory="8Gi", pods=10).obj()
    return NodeRow(name=name, node=node, updated_at=NOW)


def _pod(name: str, cpu: str, *, node: str = "", message: str | None = None, **extra: object) -> PodRow:
    pod = MakePod().name(name).uid(name).req(cpu=cpu, memory="1Gi").obj()
    return PodRow(uid=name, namespace="default", name=name, pod=pod, node_name=node, message=message, **extra)  # type: ignore[arg-type]


def test_each_node_with_what_its_pods_request() -> None:
    data = overview([_node("n1", "a"), _node("n2", "b")],
                    [_pod("p1", "1", node="n1"), _pod("p2", "2", node="n1"), _pod("big", "9", message="0/2 nodes"),
                     _pod("gone", "1", node="n2", deleted=True), _pod("victim", "1", deleted=True, preempted_by="big")])
    n1, n2 = data["nodes"]
    assert (n1["name"], n1["group"], n1["cpu"], n1["pods"]) == ("n1", "a", [3000, 4000], [2, 10])
    assert n1["memory"] == [2 << 30, 8 << 30] and fullness(n1) == 0.75
    assert n2["cpu"] == [0, 4000] and fullness(n2) == 0.0, "a deleted pod takes nothing"
    assert data["counts"] == {"bound": 2, "pending": 1, "preempted": 1}
    assert data["pending"] == [{"namespace": "default", "name": "big", "message": "0/2 nodes"}]
