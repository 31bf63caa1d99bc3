"""A preemption request names the failed nodes by position in the node order at its watermark:
read as they are on a view at that watermark, and taken afresh on a view whose nodes moved past it
(where those positions name other nodes)."""

from __future__ import annotations

from services.runtime.scheduler_config import profiles_from
from shared.cluster import ClusterView
from shared.events import NodeFailure, NodeUpserted, Position, PreemptionRequested, envelope
from shared.protocol.preemption_request import decide_preemption
from tests.unit.events.samples import make_node, running
from tests.unit.preemption.support import make_pod

WATERMARK = {"nodes": [2], "pods": [4]}


def _view(*, third_node: bool) -> ClusterView:
    """node-a runs two priority-5 pods, node-b two priority-0 pods (both full); with
    `third_node`, node-c (full of priority-0 pods too) was folded past the watermark."""
    view = ClusterView()
    for k, name in enumerate(["node-a", "node-b"]):
        view.apply(envelope(NodeUpserted(node=make_node(name, cpu="2")), producer="t"), Position("nodes", 0, k))
    pods = [("a1", "node-a", 5), ("a2", "node-a", 5), ("b1", "node-b", 0), ("b2", "node-b", 0)]
    for k, (name, node, priority) in enumerate(pods):
        created, admitted = running(make_pod(name, cpu="1", priority=priority, node_name=node))
        view.apply(created, Position("pods", 0, k))
        view.apply(admitted)
    if third_node:
        view.apply(envelope(NodeUpserted(node=make_node("node-c", cpu="2")), producer="t"), Position("nodes", 0, 2))
        for k, name in enumerate(["c1", "c2"]):
            created, admitted = running(make_pod(name, cpu="1", priority=0, node_name="node-c"))
            view.apply(created, Position("pods", 0, 4 + k))
            view.apply(admitted)
    return view


def _request(view: ClusterView) -> PreemptionRequested:
    """The attempt found node-a short of cpu and node-b (position 1 at the watermark) beyond help."""
    order = view.snapshot().names
    assert order[:2] == ["node-a", "node-b"] or order[:2] == ["node-b", "node-a"]
    a, b = order.index("node-a"), order.index("node-b")
    return PreemptionRequested(
        pod=make_pod("hi", cpu="1", priority=100), seed=1, attempt_id="uid-hi/1", watermark=WATERMARK,
        node_statuses=[
            NodeFailure(code="Unschedulable", reasons=["Insufficient cpu"], plugin="NodeResourcesFit", at=[a, 1]),
            NodeFailure(code="UnschedulableAndUnresolvable", reasons=["node(s) had volume node affinity conflict"],
                        plugin="VolumeBinding", at=[b, 1])])


def test_packed_statuses_are_read_on_the_view_at_the_watermark() -> None:
    view = _view(third_node=False)
    out = decide_preemption(profiles_from(None)["default-scheduler"], view, _request(view))
    # node-b's victims would be cheaper, but the attempt found it beyond help.
    assert out.nominated == "node-a"


def test_packed_statuses_are_taken_afresh_where_the_nodes_moved() -> None:
    at_watermark = _view(third_node=False)
    request = _request(at_watermark)
    view = _view(third_node=True)
    out = decide_preemption(profiles_from(None)["default-scheduler"], view, request, moved=True)
    # Positions no longer name the attempt's nodes: every node's status is its own on this view,
    # and node-b or node-c (priority-0 victims) beats node-a.
    assert out.nominated in {"node-b", "node-c"}
