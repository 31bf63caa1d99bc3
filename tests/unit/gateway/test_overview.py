"""The web view's overview data: what each node's pods request, the counts, the pending reasons."""

from __future__ import annotations

from datetime import UTC, datetime

from services.gateway.ui.overview import fullness, node_summary, overview, pod_requests
from shared.projection import NodeRow, PodRow, PodState
from tests.builders import MakeNode, MakePod

NOW = datetime(2026, 11, 26, tzinfo=UTC)


def _node(name: str, zone: str) -> NodeRow:
    node = (MakeNode().name(name).label("topology.kubernetes.io/zone", zone)
            .capacity(cpu="4", memory="8Gi", pods=10).obj())
    return NodeRow(name=name, node=node, updated_at=NOW)


def _state(name: str, *, node: str = "", message: str | None = None, deleted: bool = False,
           preempted_by: str | None = None, phase: str = "") -> PodState:
    return PodState(name, "default", name, node, message, deleted, preempted_by, phase)


def test_each_node_with_what_its_pods_request() -> None:
    pods = [_state("p1", node="n1"), _state("p2", node="n1"), _state("big", message="0/2 nodes"),
            _state("gone", node="n2", deleted=True), _state("victim", deleted=True, preempted_by="big")]
    requests = {"p1": (1000, 1 << 30), "p2": (2000, 1 << 30), "gone": (1000, 0)}
    data = overview([node_summary(_node("n2", "b")), node_summary(_node("n1", "a"))], pods, requests)
    n1, n2 = data["nodes"]
    assert (n1["name"], n1["group"], n1["cpu"], n1["pods"]) == ("n1", "a", [3000, 4000], [2, 10])
    assert n1["memory"] == [2 << 30, 8 << 30] and fullness(n1) == 0.75
    assert n2["cpu"] == [0, 4000] and fullness(n2) == 0.0, "a deleted pod takes nothing"
    assert data["counts"] == {"bound": 2, "pending": 1, "failed": 0, "preempted": 1}
    assert data["pending"] == [{"namespace": "default", "name": "big", "message": "0/2 nodes"}]


def test_a_pods_requests_as_the_scheduler_counts_them() -> None:
    pod = MakePod().name("p").uid("p").req(cpu="1500m", memory="1Gi").obj()
    assert pod_requests(PodRow(uid="p", pod=pod)) == (1500, 1 << 30)
    assert pod_requests(PodRow(uid="stub")) == (0, 0)


def test_a_pod_created_on_a_node_counts_there_only_once_the_node_admitted_it() -> None:
    pods = [_state("admitted", node="n1", phase="Bound"), _state("asking", node="n1", phase="Pending"),
            _state("refused", node="n1", phase="Failed")]
    requests = {"admitted": (1000, 0), "asking": (3000, 0), "refused": (7000, 0)}
    data = overview([node_summary(_node("n1", "a"))], pods, requests)
    assert data["nodes"][0]["cpu"] == [1000, 4000]
    assert data["counts"] == {"bound": 1, "pending": 1, "failed": 1, "preempted": 0}
