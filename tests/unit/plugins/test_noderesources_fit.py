"""NodeResourcesFit PreFilter/Filter: reasons, their order, the status code and fits_request."""

from __future__ import annotations

from typing import Any

import pytest

from shared.framework import events
from shared.framework.cycle_state import CycleState
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.status import Code, Status
from shared.plugins.noderesources import Fit, InsufficientResource, fits, fits_request
from tests.builders import MakeNode, MakePod

EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"
K8S_IO_A = "kubernetes.io/something"
K8S_IO_B = "subdomain.kubernetes.io/something"
HUGE_A = "hugepages-2Mi"

U = Code.UNSCHEDULABLE
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def r(cpu: int = 0, mem: int = 0, **scalars: int) -> dict[str, Any]:
    """Requests in upstream's test units: cpu in millicores, memory in bytes."""
    out: dict[str, Any] = {"cpu": f"{cpu}m", "memory": str(mem)}
    out.update({k: str(v) for k, v in scalars.items()})
    return out


def make_pod(*containers: dict[str, Any], init: tuple[dict[str, Any], ...] = (),
             overhead: dict[str, Any] | None = None, pod_level: dict[str, Any] | None = None) -> PodInfo:
    b = MakePod().name("p")
    if pod_level is not None:
        b.pod_resources(pod_level)
    for c in containers:
        b.res(c)
    for c in init:
        b.init_req(c)
    if overhead:
        b.overhead(overhead)
    return b.info()


def node_with(existing: dict[str, Any], pods: int = 32) -> NodeInfo:
    alloc = {"cpu": "10m", "memory": "20", "pods": str(pods), EXT_A: "5", "ephemeral-storage": "20", HUGE_A: "5"}
    return MakeNode().name("n").capacity(alloc).info(MakePod().name("existing").res(existing).obj())


def run_filter(plugin: Fit, pod: PodInfo, node: NodeInfo) -> Status | None:
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, [node])
    assert status is None
    return plugin.filter(state, pod, node)


def ir(name: str, requested: int, used: int, capacity: int, unresolvable: bool = False) -> InsufficientResource:
    reason = "Too many pods" if name == "pods" else f"Insufficient {name}"
    return InsufficientResource(name, reason, requested, used, capacity, unresolvable)


# (id, pod, existing usage on the node, args, expected insufficient resources)
ENOUGH_REQUESTS = [
    ("no resources requested always fits", make_pod(), r(10, 20), None, []),
    ("too many resources fails", make_pod(r(1, 1)), r(10, 20), None,
     [ir("cpu", 1, 10, 10), ir("memory", 1, 20, 20)]),
    ("too many resources fails due to init container cpu", make_pod(r(1, 1), init=(r(3, 1),)), r(8, 19), None,
     [ir("cpu", 3, 8, 10)]),
    ("too many resources fails due to highest init container cpu",
     make_pod(r(1, 1), init=(r(3, 1), r(2, 1))), r(8, 19), None, [ir("cpu", 3, 8, 10)]),
    ("too many resources fails due to init container memory", make_pod(r(1, 1), init=(r(1, 3),)), r(9, 19), None,
     [ir("memory", 3, 19, 20)]),
    ("too many resources fails due to highest init container memory",
     make_pod(r(1, 1), init=(r(1, 3), r(1, 2))), r(9, 19), None, [ir("memory", 3, 19, 20)]),
    ("init container fits because it's the max, not sum, of containers and init containers",
     make_pod(r(1, 1), init=(r(1, 1),)), r(9, 19), None, []),
    ("multiple init containers fit because it's the max, not sum, of containers and init containers",
     make_pod(r(1, 1), init=(r(1, 1), r(1, 1))), r(9, 19), None, []),
    ("both resources fit", make_pod(r(1, 1)), r(5, 5), None, []),
    ("one resource memory fits", make_pod(r(2, 1)), r(9, 5), None, [ir("cpu", 2, 9, 10)]),
    ("one resource cpu fits", make_pod(r(1, 2)), r(5, 19), None, [ir("memory", 2, 19, 20)]),
    ("equal edge case", make_pod(r(5, 1)), r(5, 19), None, []),
    ("equal edge case for init container", make_pod(r(4, 1), init=(r(5, 1),)), r(5, 19), None, []),
    ("extended resource fits", make_pod({EXT_A: "1"}), {}, None, []),
    ("extended resource fits for init container", make_pod(init=({EXT_A: "1"},)), {}, None, []),
    ("extended resource capacity enforced", make_pod(r(1, 1, **{EXT_A: 10})), r(0, 0, **{EXT_A: 0}), None,
     [ir(EXT_A, 10, 0, 5, True)]),
    ("extended resource capacity enforced for init container", make_pod(init=(r(1, 1, **{EXT_A: 10}),)),
     r(0, 0, **{EXT_A: 0}), None, [ir(EXT_A, 10, 0, 5, True)]),
    ("extended resource allocatable enforced", make_pod(r(1, 1, **{EXT_A: 1})), r(0, 0, **{EXT_A: 5}), None,
     [ir(EXT_A, 1, 5, 5)]),
    ("extended resource allocatable enforced for init container", make_pod(init=(r(1, 1, **{EXT_A: 1}),)),
     r(0, 0, **{EXT_A: 5}), None, [ir(EXT_A, 1, 5, 5)]),
    ("extended resource allocatable enforced for multiple containers",
     make_pod(r(1, 1, **{EXT_A: 3}), r(1, 1, **{EXT_A: 3})), r(0, 0, **{EXT_A: 2}), None,
     [ir(EXT_A, 6, 2, 5, True)]),
    ("extended resource allocatable admits multiple init containers",
     make_pod(init=(r(1, 1, **{EXT_A: 3}), r(1, 1, **{EXT_A: 3}))), r(0, 0, **{EXT_A: 2}), None, []),
    ("extended resource allocatable enforced for multiple init containers",
     make_pod(init=(r(1, 1, **{EXT_A: 6}), r(1, 1, **{EXT_A: 3}))), r(0, 0, **{EXT_A: 2}), None,
     [ir(EXT_A, 6, 2, 5, True)]),
    ("extended resource allocatable enforced for unknown resource", make_pod(r(1, 1, **{EXT_B: 1})), r(), None,
     [ir(EXT_B, 1, 0, 0, True)]),
    ("extended resource allocatable enforced for unknown resource for init container",
     make_pod(init=(r(1, 1, **{EXT_B: 1}),)), r(), None, [ir(EXT_B, 1, 0, 0, True)]),
    ("kubernetes.io resource capacity enforced", make_pod(r(1, 1, **{K8S_IO_A: 10})), r(), None,
     [ir(K8S_IO_A, 10, 0, 0, True)]),
    ("kubernetes.io resource capacity enforced for init container", make_pod(init=(r(1, 1, **{K8S_IO_B: 10}),)),
     r(), None, [ir(K8S_IO_B, 10, 0, 0, True)]),
    ("hugepages resource capacity enforced", make_pod(r(1, 1, **{HUGE_A: 10})), r(0, 0, **{HUGE_A: 0}), None,
     [ir(HUGE_A, 10, 0, 5, True)]),
    ("hugepages resource capacity enforced for init container", make_pod(init=(r(1, 1, **{HUGE_A: 10}),)),
     r(0, 0, **{HUGE_A: 0}), None, [ir(HUGE_A, 10, 0, 5, True)]),
    ("hugepages resource allocatable enforced for multiple containers",
     make_pod(r(1, 1, **{HUGE_A: 3}), r(1, 1, **{HUGE_A: 3})), r(0, 0, **{HUGE_A: 2}), None,
     [ir(HUGE_A, 6, 2, 5, True)]),
    ("skip checking ignored extended resource", make_pod(r(1, 1, **{EXT_B: 1})), r(),
     {"ignoredResources": [EXT_B]}, []),
    ("skip checking ignored extended resource via resource groups", make_pod(r(1, 1, **{EXT_B: 1})), r(),
     {"ignoredResourceGroups": ["example.com"]}, []),
    ("kubernetes.io resources cannot be ignored", make_pod(r(1, 1, **{K8S_IO_A: 1})), r(),
     {"ignoredResources": [K8S_IO_A]}, [ir(K8S_IO_A, 1, 0, 0, True)]),
    ("hugepages cannot be ignored", make_pod(r(1, 1, **{HUGE_A: 6})), r(),
     {"ignoredResources": [HUGE_A]}, [ir(HUGE_A, 6, 0, 5, True)]),
    ("resources + pod overhead fits", make_pod(r(1, 1), overhead={"cpu": "3m", "memory": "13"}), r(5, 5), None, []),
    ("requests + overhead does not fit for memory", make_pod(r(1, 1), overhead={"cpu": "1m", "memory": "15"}),
     r(5, 5), None, [ir("memory", 16, 5, 20)]),
    ("zero scalar request is skipped", make_pod(r(1, 1, **{EXT_B: 0})), r(), None, []),
    ("insufficient and unresolvable together make the status unresolvable",
     make_pod(r(3, 30)), r(9, 0), None, [ir("cpu", 3, 9, 10), ir("memory", 30, 0, 20, True)]),
    # Pod-level resources (PodLevelResources, on by default since v1.34): the pod's own requests
    # replace the containers' for cpu, memory and hugepages.
    ("skip checking resource request with quantity zero", make_pod({"cpu": "0", "memory": "0", EXT_A: "1"}),
     r(20, 30, **{EXT_A: 1}), None, []),
    ("both pod-level and container-level resources fit", make_pod(r(1, 1), pod_level=r(1, 2)), r(5, 5), None, []),
    ("pod-level cpu resource not fit", make_pod(r(1, 1), pod_level=r(7, 2)), r(5, 5), None, [ir("cpu", 7, 5, 10)]),
    ("pod-level memory resource not fit", make_pod(r(1, 1), pod_level=r(3, 2)), r(5, 19), None,
     [ir("memory", 2, 19, 20)]),
    ("pod-level hugepages resource fit", make_pod(pod_level=r(3, 2, **{HUGE_A: 5})), {}, None, []),
    ("both pod-level and container-level hugepages resource fit",
     make_pod(r(1, 1, **{HUGE_A: 3}), pod_level=r(3, 2, **{HUGE_A: 5})), {}, None, []),
    ("pod-level hugepages resource not fit", make_pod(pod_level=r(3, 2, **{HUGE_A: 10})), {}, None,
     [ir(HUGE_A, 10, 0, 5, True)]),
    ("one pod-level cpu resource fits and all init and non-init containers resources fit",
     make_pod(r(1, 1), init=(r(1, 1),), pod_level=r(3, 2)), r(5, 19), None, [ir("memory", 2, 19, 20)]),
]


@pytest.mark.parametrize(("pod", "existing", "args", "want"), [c[1:] for c in ENOUGH_REQUESTS],
                         ids=[c[0] for c in ENOUGH_REQUESTS])
def test_enough_requests(pod: PodInfo, existing: dict[str, Any], args: dict[str, Any] | None,
                         want: list[InsufficientResource]) -> None:
    node = node_with(existing)
    plugin = Fit.new(args, None)  # type: ignore[arg-type]  # the plugin reads no handle
    status = run_filter(plugin, pod, node)
    if not want:
        assert status is None
    else:
        code = UU if any(w.unresolvable for w in want) else U
        assert status == Status(code, *(w.reason for w in want))
    assert fits_request(pod.requests, node, plugin.ignored_resources, plugin.ignored_resource_groups) == want


NOT_ENOUGH_PODS = [
    ("even without specified resources predicate fails when there's no space for additional pod",
     make_pod(), r(10, 20), Status(U, "Too many pods")),
    ("even if both resources fit predicate fails when there's no space for additional pod",
     make_pod(r(1, 1)), r(5, 5), Status(U, "Too many pods")),
    ("even for equal edge case predicate fails when there's no space for additional pod",
     make_pod(r(5, 1)), r(5, 19), Status(U, "Too many pods")),
    ("even for equal edge case predicate fails when there's no space for additional pod due to init container",
     make_pod(r(5, 1), init=(r(5, 1),)), r(5, 19), Status(U, "Too many pods")),
    ("pod count and cpu both reported, pods first", make_pod(r(6, 1)), r(5, 5),
     Status(U, "Too many pods", "Insufficient cpu")),
    ("pod count never makes the status unresolvable, a request over allocatable does",
     make_pod(r(11, 1)), r(0, 0), Status(UU, "Too many pods", "Insufficient cpu")),
]


@pytest.mark.parametrize(("pod", "existing", "want"), [c[1:] for c in NOT_ENOUGH_PODS],
                         ids=[c[0] for c in NOT_ENOUGH_PODS])
def test_not_enough_pods(pod: PodInfo, existing: dict[str, Any], want: Status) -> None:
    assert run_filter(Fit.new(None, None), pod, node_with(existing, pods=1)) == want  # type: ignore[arg-type]  # the plugin reads no handle


def test_node_with_no_pod_room_is_unschedulable_not_unresolvable() -> None:
    node = MakeNode().name("n").capacity(cpu="1", memory="1Gi", pods=0).info()
    assert run_filter(Fit.new(None, None), make_pod(), node) == Status(U, "Too many pods")  # type: ignore[arg-type]  # the plugin reads no handle
    assert fits_request(make_pod().requests, node) == [ir("pods", 1, 0, 0)]


STORAGE = [
    ("due to container scratch disk", make_pod(r(1, 1)), r(10, 10), Status(U, "Insufficient cpu")),
    ("pod fit", make_pod(r(1, 1)), r(2, 10), None),
    ("storage ephemeral local storage request exceeds allocatable", make_pod({"ephemeral-storage": "25"}),
     r(2, 2), Status(UU, "Insufficient ephemeral-storage")),
    ("ephemeral local storage is insufficient with other pods", make_pod({"ephemeral-storage": "10"}),
     {"ephemeral-storage": "15"}, Status(U, "Insufficient ephemeral-storage")),
    ("pod fits", make_pod({"ephemeral-storage": "10"}), r(2, 2), None),
]


@pytest.mark.parametrize(("pod", "existing", "want"), [c[1:] for c in STORAGE], ids=[c[0] for c in STORAGE])
def test_storage_requests(pod: PodInfo, existing: dict[str, Any], want: Status | None) -> None:
    assert run_filter(Fit.new(None, None), pod, node_with(existing)) == want  # type: ignore[arg-type]  # the plugin reads no handle


def test_filter_without_prefilter_state_is_an_error() -> None:
    status = Fit.new(None, None).filter(CycleState(), make_pod(), node_with({}))  # type: ignore[arg-type]  # the plugin reads no handle
    assert status == Status(Code.ERROR, 'error reading "PreFilterNodeResourcesFit" from cycleState: not found')


def test_prefilter_state_clones() -> None:
    state = CycleState()
    Fit.new(None, None).pre_filter(state, make_pod(r(1, 1)), [])  # type: ignore[arg-type]  # the plugin reads no handle
    copy = state.clone()
    assert run_filter_with_state(copy, make_pod(r(1, 1)), node_with(r(10, 0))) == Status(U, "Insufficient cpu")


def run_filter_with_state(state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
    return Fit.new(None, None).filter(state, pod, node)  # type: ignore[arg-type]  # the plugin reads no handle


def test_fits_helper() -> None:
    assert fits(make_pod(r(1, 1)), node_with(r(5, 5)))
    assert not fits(make_pod(r(6, 1)), node_with(r(5, 5)))
    assert not fits(make_pod(r(1, 1, **{EXT_B: 1})), node_with(r()))


def test_sidecar_requests_count_for_the_whole_pod_life() -> None:
    pod = MakePod().name("p").res(r(2, 1)).init_req(r(3, 1), restart_policy="Always").info()
    assert fits_request(pod.requests, node_with(r(5, 0))) == []
    assert fits_request(pod.requests, node_with(r(6, 0))) == [ir("cpu", 5, 6, 10)]


def test_events_to_register() -> None:
    act = events.ActionType
    registered = Fit.new(None, None).events_to_register()  # type: ignore[arg-type]  # the plugin reads no handle
    assert [tuple(e[:2]) for e in registered] == [
        (events.POD, act.DELETE | act.UPDATE_POD_SCALE_DOWN),
        (events.NODE, act.ADD | act.UPDATE_NODE_ALLOCATABLE | act.UPDATE_NODE_TAINT | act.UPDATE_NODE_LABEL),
    ]
    assert events.ASSIGNED_POD_DELETE.matches(events.ClusterEvent(*registered[0][:2]))
    assert events.NODE_ADD.matches(events.ClusterEvent(*registered[1][:2]))


@pytest.mark.parametrize(("args", "message"), [
    ({"ignoredResourceGroups": ["example.com/aaa"]}, "resource group name can't contain '/'"),
    ({"ignoredResources": ["-bad-"]}, "ignoredResources[0]"),
    ({"scoringStrategy": {"type": "Foo"}}, 'scoringStrategy.type: Unsupported value: "Foo"'),
], ids=["group with slash", "invalid resource name", "unknown strategy"])
def test_invalid_args(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as info:
        Fit.new(args, None)  # type: ignore[arg-type]  # the plugin reads no handle
    assert message in str(info.value)
