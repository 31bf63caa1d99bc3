"""DefaultPreemption PostFilter: outcomes and messages as upstream's TestPostFilter."""

from __future__ import annotations

import random
from typing import Any

import pytest

from shared.framework.cycle_state import CycleState
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.status import Code, Status
from shared.plugins.defaultpreemption import NAME, DefaultPreemption
from shared.plugins.registry import plugin_class
from shared.scheduler.fit_error import Diagnosis, FitError
from tests.builders import MakeNode, MakePod
from tests.unit.preemption.harness import filter_statuses, make_framework, pod


def node(name: str, cpu: str, *pods: PodInfo) -> NodeInfo:
    return MakeNode().name(name).capacity(cpu=cpu, memory="8Gi").info(*pods)


def run(nodes: list[NodeInfo], preemptor: PodInfo, **kw: Any):
    fwk, plugin = make_framework(nodes, **kw)
    state, statuses = filter_statuses(fwk, preemptor)
    result, status = plugin.post_filter(state, preemptor, statuses)
    return result, status, statuses


def test_registered_under_its_upstream_name() -> None:
    assert NAME == "DefaultPreemption"
    assert plugin_class("DefaultPreemption") is DefaultPreemption


def test_preemption_policy_never_is_not_eligible() -> None:
    p = MakePod().name("p").priority(100).req(cpu="2").preemption_policy("Never").info()
    result, status, _ = run([node("node1", "2", pod("low", 1, "2", node="node1"))], p)
    assert result is None
    assert status == Status(Code.UNSCHEDULABLE, "preemption: not eligible due to preemptionPolicy=Never.")


def test_pod_is_preemptible() -> None:
    low = pod("low", 1, "2", node="node1")
    result, status, _ = run([node("node1", "2", low)], pod("p", 100, "2"))
    assert status.code == Code.SUCCESS and not status.reasons
    assert result is not None and result.nominated_node_name == "node1"
    assert [v.key for v in result.victims] == ["default/low"]


def test_unresolvable_nodes_are_not_helped() -> None:
    result, status, _ = run([node("node1", "2", pod("low", 1, "2", node="node1"))], pod("p", 100, "2"),
                            unresolvable=["node1"])
    assert result is not None and result.nominated_node_name == ""
    assert status == Status(Code.UNSCHEDULABLE,
                            "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")


def test_schedulable_on_the_one_node_with_victims() -> None:
    nodes = [node("node1", "2", pod("high", 200, "2", node="node1")),
             node("node2", "2", pod("low", 1, "2", node="node2"))]
    result, status, _ = run(nodes, pod("p", 100, "2"))
    assert status.code == Code.SUCCESS
    assert result is not None and result.nominated_node_name == "node2"


def test_node_with_lowest_highest_priority_victim_is_picked() -> None:
    nodes = [
        node("node1", "2", pod("mid", 50, "2", node="node1")),
        node("node2", "2", pod("low", 1, "2", node="node2")),
        node("node3", "2", pod("mid2", 60, "2", node="node3")),
    ]
    result, _, _ = run(nodes, pod("p", 100, "2"))
    assert result is not None and result.nominated_node_name == "node2"


def test_no_room_even_without_lower_priority_pods() -> None:
    nodes = [node("node1", "1", pod("low1", 1, "1", node="node1")),
             node("node2", "1", pod("low2", 1, "1", node="node2"))]
    result, status, _ = run(nodes, pod("p", 100, "2"))
    assert result is not None and result.nominated_node_name == ""
    assert status.message() == "preemption: 0/2 nodes are available: 2 Insufficient cpu."


def test_mixed_reasons_insufficient_cpu_and_no_victims() -> None:
    nodes = [node("node1", "1", pod("low1", 1, "1", node="node1")),
             node("node2", "2", pod("high", 200, "2", node="node2"))]
    _, status, _ = run(nodes, pod("p", 100, "2"))
    assert status.message() == (
        "preemption: 0/2 nodes are available: 1 Insufficient cpu, 1 No preemption victims found for incoming pod.")


def test_mixed_reasons_with_unresolvable_nodes() -> None:
    nodes = [node(f"node{i}", "1", pod(f"low{i}", 1, "1", node=f"node{i}")) for i in range(1, 5)]
    _, status, _ = run(nodes, pod("p", 100, "2"), unresolvable=["node1", "node2"])
    assert status.message() == (
        "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for scheduling.")


def test_whole_failure_message_as_the_scheduler_reports_it() -> None:
    p = pod("p", 100, "2")
    _, status, statuses = run([node("node1", "1")], p)
    diagnosis = Diagnosis()
    diagnosis.node_to_status = statuses
    diagnosis.post_filter_msg = status.message()
    assert FitError(p.key, 1, diagnosis).message() == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )


def test_lower_priority_pods_nominated_to_the_chosen_node_lose_their_nomination() -> None:
    low_nominated = MakePod().name("nom-low").priority(5).req(cpu="1").nominated_node("node1").info()
    high_nominated = MakePod().name("nom-high").priority(500).req(cpu="0").nominated_node("node1").info()
    result, status, _ = run([node("node1", "2", pod("low", 1, "2", node="node1"))], pod("p", 100, "1"),
                            nominated={"node1": [low_nominated, high_nominated]})
    assert status.code == Code.SUCCESS
    assert result is not None and [p.key for p in result.nominations_to_clear] == ["default/nom-low"]


def test_no_nodes_is_an_error() -> None:
    fwk, plugin = make_framework([])
    result, status = plugin.post_filter(CycleState(), pod("p", 100), {})
    assert result is None
    assert status is not None and status.code == Code.ERROR and status.message() == "preemption: no nodes available"


@pytest.mark.parametrize(("args", "message"), [
    ({"minCandidateNodesPercentage": 101},
     "minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]"),
    ({"minCandidateNodesAbsolute": -1}, "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"),
    ({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
     "cannot be zero at the same time as minCandidateNodesAbsolute"),
], ids=["percentage-range", "absolute-negative", "both-zero"])
def test_invalid_args_rejected(args: dict[str, int], message: str) -> None:
    fwk, _ = make_framework([])
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        DefaultPreemption.new(args, fwk)


@pytest.mark.parametrize(("pct", "absolute", "nodes", "want"), [
    (10, 100, 50, 50), (10, 100, 2000, 200), (5, 2, 20, 2), (0, 3, 10, 3), (50, 0, 9, 4), (100, 1, 7, 7),
], ids=["absolute-capped-by-nodes", "percentage-wins", "absolute-wins", "percentage-zero", "absolute-zero", "all"])
def test_number_of_candidates(pct: int, absolute: int, nodes: int, want: int) -> None:
    fwk, _ = make_framework([])
    plugin = DefaultPreemption.new({"minCandidateNodesPercentage": pct, "minCandidateNodesAbsolute": absolute}, fwk)
    offset, n = plugin.get_offset_and_num_candidates(nodes)
    assert n == want and 0 <= offset < nodes


def test_offset_comes_from_the_seeded_rng() -> None:
    fwk, _ = make_framework([])
    a, b = DefaultPreemption.new(None, fwk), DefaultPreemption.new(None, fwk)
    a.rng, b.rng = random.Random(7), random.Random(7)
    assert [a.get_offset_and_num_candidates(1000)[0] for _ in range(5)] == \
           [b.get_offset_and_num_candidates(1000)[0] for _ in range(5)]


def test_basic_preemption_picks_node_with_lowest_priority_victims() -> None:
    # Upstream TestPreempt 'basic preemption logic': node2 holds an equal-priority pod only.
    nodes = [
        node("node1", "500m", pod("p1.1", 0, "100m", node="node1"), pod("p1.2", 0, "100m", node="node1")),
        node("node2", "500m", pod("p2.1", 1000, "300m", node="node2")),
        node("node3", "500m", pod("p3.1", 100, "200m", node="node3")),
    ]
    result, status, _ = run(nodes, pod("p", 1000, "500m"))
    assert status.code == Code.SUCCESS and result is not None
    assert result.nominated_node_name == "node1"
    assert sorted(v.name for v in result.victims) == ["p1.1", "p1.2"]


@pytest.mark.parametrize("seed", [0, 1, 7, 42])
def test_pdb_protected_pod_reprieved_before_an_earlier_started_one(seed: int) -> None:
    from tests.unit.preemption.harness import pdb

    a = pod("a", 0, "400m", start="2024-01-01T00:00:20Z", node="node1", labels={"app": "foo"})
    b = pod("b", 0, "400m", start="2024-01-01T00:00:10Z", node="node1")
    fwk, plugin = make_framework([node("node1", "1", a, b)], pdbs=[pdb("foo-pdb", {"app": "foo"}, allowed=0)])
    plugin.rng = random.Random(seed)
    p = pod("p", 100, "600m")
    state, statuses = filter_statuses(fwk, p)
    result, status = plugin.post_filter(state, p, statuses)
    assert status is not None and status.code == Code.SUCCESS and result is not None
    assert [v.name for v in result.victims] == ["b"]
