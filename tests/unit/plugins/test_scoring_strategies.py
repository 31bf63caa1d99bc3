"""NodeResourcesFit scoring: LeastAllocated, MostAllocated and RequestedToCapacityRatio, with the
facts of upstream's tables (node capacities in whole cores and bytes, as upstream writes them)."""

from __future__ import annotations

from typing import Any

import pytest

from shared.framework.cycle_state import CycleState
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.status import Code
from shared.plugins.noderesources import Fit
from shared.plugins.noderesources.strategies import broken_linear_function, go_div, go_round
from tests.unit.plugins.noderesources_support import cm, node, pod

EXT = "abc.com/xyz"
DEFAULT = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
WITH_EXT = [*DEFAULT, {"name": EXT, "weight": 1}]


def score_all(args: dict[str, Any], requested: PodInfo, nodes: list[NodeInfo],
              pre_score: bool = True) -> list[int]:
    plugin = Fit.new(args, None)  # type: ignore[arg-type]  # the plugin reads no handle
    state = CycleState()
    if pre_score:
        assert plugin.pre_score(state, requested, nodes) is None
    out = []
    for n in nodes:
        score, status = plugin.score(state, requested, n)
        assert status is None
        out.append(score)
    return out


def strategy(kind: str, resources: list[dict[str, Any]], shape: list[dict[str, int]] | None = None) -> dict[str, Any]:
    s: dict[str, Any] = {"type": kind, "resources": resources}
    if shape is not None:
        s["requestedToCapacityRatio"] = {"shape": shape}
    return {"scoringStrategy": s}


SMALL = cm("4000", "10000")
TWO_CONTAINERS = (cm("1000", "2000"), cm("2000", "3000"))

LEAST = [
    ("nothing scheduled, nothing requested", pod(), [node("node1", SMALL), node("node2", SMALL)], DEFAULT, [100, 100]),
    ("nothing scheduled, resources requested, differently sized nodes", pod(*TWO_CONTAINERS),
     [node("node1", SMALL), node("node2", cm("6000", "10000"))], DEFAULT, [37, 50]),
    ("no resources requested, pods scheduled", pod(),
     [node("node1", SMALL, pod(), pod()), node("node2", SMALL, pod(), pod())], DEFAULT, [100, 100]),
    ("no resources requested, pods scheduled with resources", pod(),
     [node("node1", cm("10000", "20000"), pod(cm("3000", "0")), pod(cm("3000", "0"))),
      node("node2", cm("10000", "20000"), pod(cm("3000", "0")), pod(cm("3000", "5000")))], DEFAULT, [70, 57]),
    ("resources requested, pods scheduled with resources", pod(*TWO_CONTAINERS),
     [node("node1", cm("10000", "20000"), pod(cm("3000", "0"))),
      node("node2", cm("10000", "20000"), pod(cm("3000", "5000")))], DEFAULT, [57, 45]),
    ("resources requested, pods scheduled with resources, differently sized nodes", pod(*TWO_CONTAINERS),
     [node("node1", cm("10000", "20000"), pod(cm("3000", "0"))),
      node("node2", cm("10000", "50000"), pod(cm("3000", "5000")))], DEFAULT, [57, 60]),
    ("requested resources exceed node capacity", pod(cm("3000", "0")),
     [node("node1", SMALL, pod(cm("3000", "0"))), node("node2", SMALL, pod(cm("3000", "5000")))], DEFAULT, [50, 25]),
    ("zero node resources, pods scheduled with resources", pod(),
     [node("node1", {}, pod(cm("3000", "0"))), node("node2", {}, pod(cm("3000", "5000")))], DEFAULT, [0, 0]),
    ("nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes",
     pod(*TWO_CONTAINERS), [node("node1", SMALL), node("node2", cm("6000", "10000"))],
     [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}], [41, 50]),
    ("bypass extended resource if the pod does not request", pod(*TWO_CONTAINERS),
     [node("node1", cm("6000", "10000")), node("node2", cm("6000", "10000", **{EXT: "4"}))], WITH_EXT, [50, 50]),
    ("honor extended resource if the pod requests", pod(cm("3000", "5000", **{EXT: "2"})),
     [node("node1", cm("6000", "10000", **{EXT: "4"})), node("node2", cm("6000", "10000", **{EXT: "10"}))],
     WITH_EXT, [50, 60]),
    ("if the node doesn't have a resource", pod(cm("3000", "4000")),
     [node("node1", cm("6000", "10000")), node("node2", cm("6000", "10000", **{EXT: "4"}))],
     [{"name": EXT, "weight": 2}, *DEFAULT], [55, 55]),
    ("a container without requests counts 100m cpu and 200Mi memory", pod({}),
     [node("node1", cm("1", "1000Mi")), node("node2", cm("1", "400Mi"))], DEFAULT, [85, 70]),
]


@pytest.mark.parametrize(("requested", "nodes", "resources", "want"), [c[1:] for c in LEAST],
                         ids=[c[0] for c in LEAST])
def test_least_allocated(requested: PodInfo, nodes: list[NodeInfo], resources: list[dict[str, Any]],
                         want: list[int]) -> None:
    assert score_all(strategy("LeastAllocated", resources), requested, nodes) == want


def test_least_allocated_is_the_default() -> None:
    nodes = [node("node1", SMALL), node("node2", cm("6000", "10000"))]
    assert score_all({}, pod(*TWO_CONTAINERS), nodes) == [37, 50]
    assert score_all({}, pod(*TWO_CONTAINERS), nodes, pre_score=False) == [37, 50]


MOST = [
    ("nothing scheduled, nothing requested", pod(), [node("node1", SMALL), node("node2", SMALL)], DEFAULT, [0, 0]),
    ("nothing scheduled, resources requested, differently sized nodes", pod(*TWO_CONTAINERS),
     [node("node1", SMALL), node("node2", cm("6000", "10000"))], DEFAULT, [62, 50]),
    ("no resources requested, pods scheduled with resources", pod(),
     [node("node1", cm("10000", "20000"), pod(cm("3000", "0")), pod(cm("3000", "0"))),
      node("node2", cm("10000", "20000"), pod(cm("3000", "0")), pod(cm("3000", "5000")))], DEFAULT, [30, 42]),
    ("resources requested, pods scheduled with resources", pod(*TWO_CONTAINERS),
     [node("node1", cm("10000", "20000"), pod(cm("3000", "0"))),
      node("node2", cm("10000", "20000"), pod(cm("3000", "5000")))], DEFAULT, [42, 55]),
    ("resources requested equal node capacity", pod(cm("2000", "4000"), cm("3000", "5000")),
     [node("node1", cm("5000", "10000")), node("node2", cm("10000", "9000"))], DEFAULT, [95, 75]),
    ("nothing scheduled, resources requested with different weight on CPU and memory",
     pod(*TWO_CONTAINERS), [node("node1", SMALL), node("node2", cm("6000", "10000"))],
     [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}], [58, 50]),
    ("no resources requested, pods scheduled, nonzero request for resource", pod({}),
     [node("node1", cm("250m", "1000Mi"), pod({}), pod({})), node("node2", cm("250m", "1000Mi"))], DEFAULT, [80, 30]),
    ("bypass extended resource if the pod does not request", pod(*TWO_CONTAINERS),
     [node("node1", cm("6000", "10000")), node("node2", cm("6000", "10000", **{EXT: "4"}))], WITH_EXT, [50, 50]),
    ("honor extended resource if the pod request", pod(cm("3000", "5000", **{EXT: "2"})),
     [node("node1", cm("6000", "10000", **{EXT: "4"})), node("node2", cm("6000", "10000", **{EXT: "10"}))],
     WITH_EXT, [50, 40]),
    ("if the node doesn't have a resource", pod(cm("3000", "4000")),
     [node("node1", cm("6000", "10000")), node("node2", cm("6000", "10000", **{EXT: "4"}))],
     [{"name": EXT, "weight": 2}, *DEFAULT], [45, 45]),
]


@pytest.mark.parametrize(("requested", "nodes", "resources", "want"), [c[1:] for c in MOST],
                         ids=[c[0] for c in MOST])
def test_most_allocated(requested: PodInfo, nodes: list[NodeInfo], resources: list[dict[str, Any]],
                        want: list[int]) -> None:
    assert score_all(strategy("MostAllocated", resources), requested, nodes) == want


LEAST_SHAPE = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
BIN_PACK_SHAPE = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 1}]
FOO, BAR = "intel.com/foo", "intel.com/bar"


RTC = [
    ("nothing scheduled, nothing requested (default - least requested nodes have priority)", pod(),
     [node("node1", SMALL, pod(), pod()), node("node2", SMALL)], DEFAULT, LEAST_SHAPE, [100, 100]),
    ("nothing scheduled, resources requested, differently sized nodes (default - least requested nodes have "
     "priority)", pod(*TWO_CONTAINERS), [node("node1", SMALL, pod(), pod()), node("node2", cm("6000", "10000"))],
     DEFAULT, LEAST_SHAPE, [38, 50]),
    ("no resources requested, pods scheduled with resources (default - least requested nodes have priority)", pod(),
     [node("node1", SMALL, pod(cm("3000", "5000"))), node("node2", cm("6000", "10000"), pod(cm("3000", "5000")))],
     DEFAULT, LEAST_SHAPE, [38, 50]),
    ("single extended: nothing scheduled, nothing requested", pod(),
     [node("node1", {"cpu": "4", FOO: "8"}), node("node2", {"cpu": "4", FOO: "4"})],
     [{"name": FOO, "weight": 1}], BIN_PACK_SHAPE, [0, 0]),
    ("single extended: resources requested, pods scheduled with less resources", pod({FOO: "2"}),
     [node("node1", {"cpu": "4", FOO: "8"}, pod()), node("node2", {"cpu": "4", FOO: "4"})],
     [{"name": FOO, "weight": 1}], BIN_PACK_SHAPE, [2, 5]),
    ("single extended: resources requested, pods scheduled with resources, on node with existing pod running",
     pod({FOO: "2"}), [node("node1", {"cpu": "4", FOO: "8"}), node("node2", {"cpu": "4", FOO: "4"}, pod({FOO: "2"}))],
     [{"name": FOO, "weight": 1}], BIN_PACK_SHAPE, [2, 10]),
    ("single extended: resources requested, pods scheduled with more resources", pod({FOO: "4"}),
     [node("node1", {"cpu": "4", FOO: "8"}), node("node2", {"cpu": "4", FOO: "4"})],
     [{"name": FOO, "weight": 1}], BIN_PACK_SHAPE, [5, 10]),
    ("multiple extended: nothing scheduled, nothing requested", pod(),
     [node("node1", {FOO: "8", BAR: "4"}), node("node2", {FOO: "4", BAR: "8"})],
     [{"name": FOO, "weight": 3}, {"name": BAR, "weight": 5}], BIN_PACK_SHAPE, [0, 0]),
    ("multiple extended: resources requested, pods scheduled with less resources", pod({FOO: "2", BAR: "2"}),
     [node("node1", {FOO: "8", BAR: "4"}), node("node2", {FOO: "4", BAR: "8"})],
     [{"name": FOO, "weight": 3}, {"name": BAR, "weight": 5}], BIN_PACK_SHAPE, [4, 3]),
    ("multiple extended: resources requested, pods scheduled with more resources", pod({FOO: "4", BAR: "2"}),
     [node("node1", {FOO: "8", BAR: "4"}), node("node2", {FOO: "4", BAR: "8"})],
     [{"name": FOO, "weight": 3}, {"name": BAR, "weight": 5}], BIN_PACK_SHAPE, [5, 5]),
]


@pytest.mark.parametrize(("requested", "nodes", "resources", "shape", "want"), [c[1:] for c in RTC],
                         ids=[c[0] for c in RTC])
def test_requested_to_capacity_ratio(requested: PodInfo, nodes: list[NodeInfo], resources: list[dict[str, Any]],
                                     shape: list[dict[str, int]], want: list[int]) -> None:
    args = strategy("RequestedToCapacityRatio", resources, shape)
    assert score_all(args, requested, nodes, pre_score=False) == want
    assert score_all(args, requested, nodes) == want


BROKEN_LINEAR = [
    ([(10, 1), (90, 9)], [(-10, 1), (0, 1), (9, 1), (10, 1), (15, 1), (19, 1), (20, 2), (89, 8), (90, 9), (99, 9),
                          (100, 9), (110, 9)]),
    ([(0, 2), (40, 10), (100, 0)], [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)]),
    ([(0, 2), (40, 2), (100, 2)], [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)]),
    # Falling segments truncate toward zero as Go does: 10 + (-10*25)/100 is 8, not 7.
    ([(0, 100), (100, 0)], [(33, 67), (75, 25)]),
    ([(0, 10), (100, 0)], [(25, 8), (15, 9)]),
]


@pytest.mark.parametrize(("points", "checks"), BROKEN_LINEAR, ids=[f"case_{i}" for i in range(len(BROKEN_LINEAR))])
def test_broken_linear_function(points: list[tuple[int, int]], checks: list[tuple[int, int]]) -> None:
    f = broken_linear_function(points)
    assert [(p, f(p)) for p, _ in checks] == checks


@pytest.mark.parametrize(("a", "b", "want"), [(7, 2, 3), (-7, 2, -3), (7, -2, -3), (-25, 10, -2), (0, 5, 0)],
                         ids=["positive", "negative dividend", "negative divisor", "falls toward zero", "zero"])
def test_go_div(a: int, b: int, want: int) -> None:
    assert go_div(a, b) == want


@pytest.mark.parametrize(("x", "want"), [(37.5, 38), (2.5, 3), (3.125, 3), (3.875, 4), (-2.5, -3), (0.0, 0)],
                         ids=["half up", "half up not to even", "down", "up", "negative half away", "zero"])
def test_go_round(x: float, want: int) -> None:
    assert go_round(x) == want


INVALID = [
    ("resource with negative weight",
     strategy("LeastAllocated", [{"name": "memory", "weight": -1}, {"name": "cpu", "weight": 1}]),
     "scoringStrategy.resources[0].weight: Invalid value: -1"),
    ("resource weight larger than MaxNodeScore",
     strategy("MostAllocated", [{"name": "memory", "weight": 1}, {"name": "cpu", "weight": 101}]),
     "scoringStrategy.resources[1].weight: Invalid value: 101"),
    ("shape not sorted", strategy("RequestedToCapacityRatio", DEFAULT,
                                  [{"utilization": 50, "score": 1}, {"utilization": 10, "score": 2}]),
     "utilization values must be sorted in increasing order"),
    ("shape score over 10", strategy("RequestedToCapacityRatio", DEFAULT, [{"utilization": 50, "score": 11}]),
     "scoringStrategy.shape[0].score: Invalid value: 11: not in valid range [0, 10]"),
    ("shape utilization over 100", strategy("RequestedToCapacityRatio", DEFAULT, [{"utilization": 101, "score": 1}]),
     "scoringStrategy.shape[0].utilization: Invalid value: 101: not in valid range [0, 100]"),
    ("empty shape", strategy("RequestedToCapacityRatio", DEFAULT, []), "at least one point must be specified"),
    ("missing shape", strategy("RequestedToCapacityRatio", DEFAULT), "requestedToCapacityRatio: Required value"),
]


@pytest.mark.parametrize(("args", "message"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_scoring_args(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as info:
        Fit.new(args, None)  # type: ignore[arg-type]  # the plugin reads no handle
    assert message in str(info.value)


def test_zero_or_missing_weight_defaults_to_one() -> None:
    nodes = [node("node1", SMALL), node("node2", cm("6000", "10000"))]
    args = strategy("LeastAllocated", [{"name": "memory", "weight": 0}, {"name": "cpu"}])
    assert score_all(args, pod(*TWO_CONTAINERS), nodes) == [37, 50]


def test_empty_resources_default_to_cpu_and_memory() -> None:
    nodes = [node("node1", SMALL), node("node2", cm("6000", "10000"))]
    assert score_all(strategy("MostAllocated", []), pod(*TWO_CONTAINERS), nodes) == [62, 50]


def test_score_without_resources_is_an_error() -> None:
    from shared.plugins.noderesources.resource_allocation import ResourceAllocationScorer
    from shared.plugins.noderesources.strategies import least_resource_scorer

    plugin = Fit(scorer=ResourceAllocationScorer((), False, least_resource_scorer(())))
    score, status = plugin.score(CycleState(), pod(*TWO_CONTAINERS), node("node1", SMALL))
    assert (score, status is not None and status.code, status and status.reasons) == (0, Code.ERROR,
                                                                                       ("resources not found",))
