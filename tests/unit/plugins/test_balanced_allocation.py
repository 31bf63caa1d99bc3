"""NodeResourcesBalancedAllocation: (1 - std of the usage fractions) * 100, on plain requests."""

from __future__ import annotations

from typing import Any

import pytest

from shared.framework.cycle_state import CycleState
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.status import Code
from shared.plugins.noderesources import BalancedAllocation, balanced_resource_scorer
from tests.unit.plugins.noderesources_support import cm, node, pod

EXT = "example.com/gpu"


def scores(args: dict[str, Any] | None, requested: PodInfo, nodes: list[NodeInfo]) -> list[int]:
    plugin = BalancedAllocation.new(args, None)  # type: ignore[arg-type]  # the plugin reads no handle
    state = CycleState()
    assert plugin.pre_score(state, requested, nodes) is None
    out = []
    for n in nodes:
        score, status = plugin.score(state, requested, n)
        assert status is None
        out.append(score)
    return out


TWO = (cm("1000", "2000"), cm("2000", "3000"))
BIG = cm("10000", "20000")

CASES = [
    # fractions cpu 3000/4000=0.75, mem 5000/10000=0.5: std 0.125 -> 87; equal fractions -> 100
    ("nothing scheduled, resources requested, differently sized nodes", pod(*TWO),
     [node("node1", cm("4000", "10000")), node("node2", cm("6000", "10000"))], None, [87, 100]),
    # node1 0.6 / 0.25 -> std 0.175 -> 82; node2 0.6 / 0.5 -> std 0.05 -> 95
    ("resources requested, pods scheduled with resources", pod(*TWO),
     [node("node1", BIG, pod(cm("3000", "0"))), node("node2", BIG, pod(cm("3000", "5000")))], None, [82, 95]),
    # node2 0.6 / 10000/50000=0.2 -> std 0.2 -> 80
    ("resources requested, pods scheduled with resources, differently sized nodes", pod(*TWO),
     [node("node1", BIG, pod(cm("3000", "0"))), node("node2", cm("10000", "50000"), pod(cm("3000", "5000")))],
     None, [82, 80]),
    # cpu 6000/4000 is capped at 1: node1 1 / 0 -> 50; node2 1 / 0.5 -> 75
    ("requested resources exceed node capacity", pod(cm("3000", "0")),
     [node("node1", cm("4000", "10000"), pod(cm("3000", "0"))),
      node("node2", cm("4000", "10000"), pod(cm("3000", "5000")))], None, [50, 75]),
    # no non-zero defaults: a request-less container adds nothing to the fractions
    ("containers without requests count zero", pod(cm("1000", "0"), {}),
     [node("node1", cm("4000", "4000"), pod({})), node("node2", cm("2000", "4000"))], None, [87, 75]),
    # a resource the node does not offer leaves a single fraction: std 0 -> 100
    ("one scored resource gives a perfect balance", pod(cm("1000", "1000")),
     [node("node1", {"cpu": "4000"}), node("node2", cm("4000", "2000"))], None, [100, 87]),
    # three fractions 0.5, 0.25, 0.5: mean 5/12, std sqrt(1/72) = 0.11785 -> 88
    ("standard deviation over three resources", pod(cm("2000", "1000", **{EXT: "2"})),
     [node("node1", cm("4000", "4000", **{EXT: "4"}))],
     {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": EXT, "weight": 1}]},
     [88]),
    # an extended resource the pod does not request is left out
    ("extended resource not requested by the pod is bypassed", pod(cm("2000", "1000")),
     [node("node1", cm("4000", "4000", **{EXT: "4"}))],
     {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": EXT}]}, [87]),
    ("ephemeral storage on its requests", pod({"cpu": "1", "ephemeral-storage": "3"}),
     [node("node1", {"cpu": "4", "ephemeral-storage": "4"})],
     {"resources": [{"name": "cpu", "weight": 1}, {"name": "ephemeral-storage", "weight": 1}]}, [75]),
]


@pytest.mark.parametrize(("requested", "nodes", "args", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_balanced_allocation(requested: PodInfo, nodes: list[NodeInfo], args: dict[str, Any] | None,
                             want: list[int]) -> None:
    assert scores(args, requested, nodes) == want


def test_best_effort_pod_skips_scoring() -> None:
    plugin = BalancedAllocation.new(None, None)  # type: ignore[arg-type]  # the plugin reads no handle
    state = CycleState()
    status = plugin.pre_score(state, pod({}), [node("node1", cm("4000", "10000"))])
    assert status is not None and status.code == Code.SKIP
    # Without PreScore state, Score recomputes the requests and gives a best-effort pod 0.
    assert plugin.score(CycleState(), pod({}), node("node1", cm("4000", "10000"))) == (0, None)


def test_score_without_prescore_state() -> None:
    plugin = BalancedAllocation.new(None, None)  # type: ignore[arg-type]  # the plugin reads no handle
    assert plugin.score(CycleState(), pod(*TWO), node("node1", cm("4000", "10000"))) == (87, None)


@pytest.mark.parametrize(("requested", "allocatable", "want"), [
    ([3, 5], [4, 10], 87),
    ([0, 0], [0, 0], 100),
    ([6, 0], [4, 10], 50),
    ([1, 1, 1], [2, 4, 0], 87),
], ids=["two fractions", "nothing allocatable", "fraction capped at one", "zero allocatable skipped"])
def test_balanced_resource_scorer(requested: list[int], allocatable: list[int], want: int) -> None:
    assert balanced_resource_scorer(requested, allocatable) == want


@pytest.mark.parametrize(("args", "message"), [
    ({"resources": [{"name": "cpu", "weight": 2}]}, "resources[0].weight: Invalid value: 2: must be 1"),
    ({"resources": [{"name": "cpu"}, {"name": "cpu"}]}, 'resources[1].name: Duplicate value: "cpu"'),
], ids=["weight other than one", "duplicate resource"])
def test_invalid_args(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as info:
        BalancedAllocation.new(args, None)  # type: ignore[arg-type]  # the plugin reads no handle
    assert message in str(info.value)
