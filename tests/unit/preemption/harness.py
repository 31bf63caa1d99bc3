"""A small framework for preemption tests: test-local filters (cpu fit, an exclusive-pod rule kept
in PreFilter state, unresolvable nodes) so the tests depend on no default plugin."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import FilterPlugin, PreFilterExtensions, PreFilterPlugin, PreFilterResult
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.runtime import Framework
from shared.framework.snapshot import Snapshot
from shared.framework.status import Code, Status
from shared.model import PodDisruptionBudget
from shared.plugins.defaultpreemption import DefaultPreemption
from tests.builders import MakePod

INSUFFICIENT_CPU = "Insufficient cpu"
EXCLUSIVE = "exclusive"
EXCLUSIVE_REASON = "node(s) had an exclusive pod"
UNRESOLVABLE_REASON = "node(s) didn't match Pod's node affinity/selector"


class CpuFit(FilterPlugin):
    NAME = "TestCpuFit"

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if node_info.requested.milli_cpu + pod.requests.milli_cpu > node_info.allocatable.milli_cpu:
            return Status(Code.UNSCHEDULABLE, INSUFFICIENT_CPU)
        return None


class _Counts:
    def __init__(self, per_node: dict[str, int]) -> None:
        self.per_node = per_node

    def clone(self) -> _Counts:
        return _Counts(dict(self.per_node))


class Exclusive(PreFilterPlugin, FilterPlugin, PreFilterExtensions):
    """A pod labelled `exclusive` fits only on nodes without other exclusive pods. The counts live
    in CycleState, so only the PreFilter extensions can tell Filter that a pod was removed."""

    NAME = "TestExclusive"
    KEY = "PreFilter" + NAME

    def pre_filter(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
                   ) -> tuple[PreFilterResult | None, Status | None]:
        state.write(self.KEY, _Counts({n.name: sum(EXCLUSIVE in p.labels for p in n.pods) for n in nodes}))
        return None, None

    def pre_filter_extensions(self) -> PreFilterExtensions:
        return self

    def add_pod(self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo) -> Status | None:
        if EXCLUSIVE in pod_to_add.labels:
            counts = state.read(self.KEY).per_node
            counts[node_info.name] = counts.get(node_info.name, 0) + 1
        return None

    def remove_pod(self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo) -> Status | None:
        if EXCLUSIVE in pod_to_remove.labels:
            state.read(self.KEY).per_node[node_info.name] -= 1
        return None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if EXCLUSIVE in pod.labels and state.read(self.KEY).per_node.get(node_info.name, 0) > 0:
            return Status(Code.UNSCHEDULABLE, EXCLUSIVE_REASON)
        return None


class Unresolvable(FilterPlugin):
    NAME = "TestUnresolvable"

    def __init__(self, nodes: Iterable[str]) -> None:
        self.nodes = set(nodes)

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if node_info.name in self.nodes:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, UNRESOLVABLE_REASON)
        return None


class FakeNominator:
    def __init__(self, nominated: Mapping[str, list[PodInfo]] | None = None) -> None:
        self.nominated = dict(nominated or {})

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return list(self.nominated.get(node_name, []))


def make_framework(
    nodes: Sequence[NodeInfo], *, pdbs: Sequence[PodDisruptionBudget] = (),
    nominated: Mapping[str, list[PodInfo]] | None = None, extenders: Sequence[Any] = (),
    unresolvable: Iterable[str] = (), args: Mapping[str, Any] | None = None, offset: int | None = None,
) -> tuple[Framework, DefaultPreemption]:
    fwk = Framework("test", {}, {})
    plugin = DefaultPreemption.new(args, fwk)
    exclusive = Exclusive()
    fwk.install({"preFilter": [exclusive], "filter": [Unresolvable(unresolvable), CpuFit(), exclusive],
                 "postFilter": [plugin]}, {})
    fwk.set_snapshot(Snapshot(nodes))
    fwk.set_nominator(FakeNominator(nominated))
    fwk.set_pod_disruption_budgets(list(pdbs))
    fwk.set_extenders(list(extenders))
    if offset is not None:
        plugin.rng = FixedOffset(offset)  # type: ignore[assignment]  # duck-types random.Random
    return fwk, plugin


class FixedOffset:
    """Stands in for random.Random where a test needs a known dry-run offset."""

    def __init__(self, offset: int) -> None:
        self.offset = offset

    def randrange(self, n: int) -> int:
        return self.offset % n


def filter_statuses(fwk: Framework, pod: PodInfo) -> tuple[CycleState, dict[str, Status]]:
    """Run PreFilter and Filter as a scheduling cycle does; the statuses of the rejected nodes."""
    state = CycleState()
    _, status, _ = fwk.run_pre_filter_plugins(state, pod)
    assert status is None or status.is_success()
    statuses: dict[str, Status] = {}
    for info in fwk.snapshot().node_info_list:
        s = fwk.run_filter_plugins_with_nominated_pods(state, pod, info)
        if s is not None and not s.is_success():
            statuses[info.name] = s
    return state, statuses


def pod(name: str, priority: int, cpu: str = "1", start: str | None = None, node: str = "",
        labels: Mapping[str, str] | None = None) -> PodInfo:
    b = MakePod().name(name).priority(priority).req(cpu=cpu)
    if start:
        b.start_time(start)
    if node:
        b.node(node)
    if labels:
        b.labels(dict(labels))
    return b.info()


def pdb(name: str, match_labels: dict[str, str] | None, allowed: int, disrupted: Iterable[str] = (),
        namespace: str = "default") -> PodDisruptionBudget:
    import msgspec

    spec: dict[str, Any] = {}
    if match_labels is not None:
        spec["selector"] = {"matchLabels": match_labels}
    return msgspec.convert({
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
        "status": {"disruptionsAllowed": allowed, "disruptedPods": {p: "2024-01-01T00:00:00Z" for p in disrupted}},
    }, PodDisruptionBudget)
