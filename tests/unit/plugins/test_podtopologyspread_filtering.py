"""PodTopologySpread PreFilter/Filter: outcomes and reasons as upstream's filtering_test.go."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from shared.framework import events
from shared.framework.cycle_state import CycleState
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.snapshot import Snapshot
from shared.framework.status import Code, Status
from shared.model import Pod
from shared.model.selectors import selector_from_set
from shared.plugins.podtopologyspread import PodTopologySpread
from shared.plugins.podtopologyspread.filtering import CriticalPaths, PreFilterState
from shared.plugins.podtopologyspread.plugin import PRE_FILTER_STATE_KEY
from shared.plugins.registry import plugin_class
from tests.builders import MakeNode, MakePod

NOT_MATCH = "node(s) didn't match pod topology spread constraints"
MISSING_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
OK, UNSCHED, UNRESOLVABLE = "ok", "unschedulable", "unresolvable"
EXPECTED = {
    OK: None,
    UNSCHED: Status(Code.UNSCHEDULABLE, NOT_MATCH),
    UNRESOLVABLE: Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MISSING_LABEL),
}


class FakeHandle:
    def __init__(self, infos: list[NodeInfo]) -> None:
        self._snapshot = Snapshot(infos)

    def snapshot(self) -> Snapshot:
        return self._snapshot


def node(name: str, **labels: str) -> MakeNode:
    return MakeNode().name(name).labels(labels)


def zn(name: str, zone: str) -> MakeNode:
    """A node labelled with its zone and its own name under "node"."""
    return node(name, zone=zone, node=name)


def existing(name: str, node_name: str, ns: str = "default", terminating: bool = False, **labels: str) -> Pod:
    pod = MakePod().name(name).namespace(ns).node(node_name).labels(labels).obj()
    if terminating:
        meta = msgspec.structs.replace(pod.metadata, deletion_timestamp="2024-01-01T00:00:00Z")
        pod = msgspec.structs.replace(pod, metadata=meta)
    return pod


def foo_pods(spec: dict[str, int]) -> list[Pod]:
    """`count` pods labelled foo on each named node."""
    return [existing(f"p-{n}{i}", n, foo="") for n, count in spec.items() for i in range(count)]


def infos(nodes: list[MakeNode], pods: list[Pod]) -> list[NodeInfo]:
    out = []
    for mk in nodes:
        name = mk.obj().metadata.name
        out.append(mk.info(*[p for p in pods if p.spec.node_name == name]))
    return out


def plugin(nodes: list[NodeInfo], args: dict[str, Any] | None = None, **kw: Any) -> PodTopologySpread:
    return PodTopologySpread.new(args, FakeHandle(nodes), **kw)  # type: ignore[arg-type]  # a stand-in: only its snapshot is read


def run_filter(pod: PodInfo, nodes: list[NodeInfo], pl: PodTopologySpread | None = None) -> dict[str, Status | None]:
    pl = pl or plugin(nodes)
    state = CycleState()
    _, status = pl.pre_filter(state, pod, nodes)
    assert status is None
    return {n.name: pl.filter(state, pod, n) for n in nodes}


FOUR = [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2"), zn("node-y", "zone2")]
SPREAD_2103 = foo_pods({"node-a": 2, "node-b": 1, "node-y": 3})


def spread(max_skew: int, key: str, selector: dict[str, Any] | None = FOO, labels: dict[str, str] | None = None,
           **kw: Any) -> MakePod:
    return MakePod().name("p").labels(labels if labels is not None else {"foo": ""}).spread(
        max_skew, key, "DoNotSchedule", selector, **kw)


SINGLE = [
    ("no existing pods", spread(1, "zone"), FOUR, [], dict.fromkeys(["node-a", "node-b", "node-x", "node-y"], OK)),
    ("incoming pod doesn't match itself", spread(1, "zone", BAR), FOUR, [],
     dict.fromkeys(["node-a", "node-b", "node-x", "node-y"], OK)),
    ("existing pods in a different namespace do not count", spread(1, "zone"), FOUR,
     [existing("p-a1", "node-a", "ns1", foo=""), existing("p-b1", "node-a", "ns2", foo=""),
      existing("p-x1", "node-x", foo=""), existing("p-y1", "node-y", foo="")],
     {"node-a": OK, "node-b": OK, "node-x": UNSCHED, "node-y": UNSCHED}),
    ("zones 3/3, all nodes fit", spread(1, "zone"), FOUR, SPREAD_2103,
     dict.fromkeys(["node-a", "node-b", "node-x", "node-y"], OK)),
    ("zones 1/2 as node-b lacks the zone label",
     spread(1, "zone"),
     [zn("node-a", "zone1"), node("node-b", zon="zone1", node="node-b"), zn("node-x", "zone2"), zn("node-y", "zone2")],
     foo_pods({"node-a": 1, "node-b": 1, "node-x": 1, "node-y": 1}),
     {"node-a": OK, "node-b": UNRESOLVABLE, "node-x": UNSCHED, "node-y": UNSCHED}),
    ("no node has the rack label", spread(1, "rack"), [zn("node-a", "zone1"), zn("node-x", "zone2")], [],
     {"node-a": UNRESOLVABLE, "node-x": UNRESOLVABLE}),
    ("nodes 2/1/0/3, only node-x fits", spread(1, "node"), FOUR, SPREAD_2103,
     {"node-a": UNSCHED, "node-b": UNSCHED, "node-x": OK, "node-y": UNSCHED}),
    ("nodes 2/1/0/3, maxSkew 2, node-b and node-x fit", spread(2, "node"), FOUR, SPREAD_2103,
     {"node-a": UNSCHED, "node-b": OK, "node-x": OK, "node-y": UNSCHED}),
    ("nodes 2/1/0/3, pod doesn't match itself", spread(1, "node", labels={"bar": ""}), FOUR, SPREAD_2103,
     {"node-a": UNSCHED, "node-b": OK, "node-x": OK, "node-y": UNSCHED}),
    # Only node-a and node-y count (2/~1~/~0~/3); NodeAffinity itself is not run here.
    ("incoming pod has node affinity, nodes 2/-/-/3, node-a fits",
     spread(1, "node").node_affinity_in("node", ["node-a", "node-y"]), FOUR, SPREAD_2103,
     {"node-a": OK, "node-b": OK, "node-x": OK, "node-y": UNSCHED}),
    ("terminating pods are excluded", spread(1, "node"),
     [node("node-a", node="node-a"), node("node-b", node="node-b")],
     [existing("p-a", "node-a", terminating=True, foo=""), existing("p-b", "node-b", foo="")],
     {"node-a": OK, "node-b": UNSCHED}),
    ("null label selector matches nothing", spread(1, "node", None), FOUR, SPREAD_2103,
     dict.fromkeys(["node-a", "node-b", "node-x", "node-y"], OK)),
]

MIN_DOMAINS = [
    # 2 zones < minDomains 3: the global minimum is 0, so any zone holding a pod is too skewed.
    ("fewer domains than minDomains, global minimum 0", spread(1, "zone", min_domains=3), FOUR,
     foo_pods({"node-a": 1, "node-x": 1}), dict.fromkeys(["node-a", "node-b", "node-x", "node-y"], UNSCHED)),
    ("fewer domains than minDomains, maxSkew 2 tolerates", spread(2, "zone", min_domains=3), FOUR,
     foo_pods({"node-a": 1, "node-x": 1}), dict.fromkeys(["node-a", "node-b", "node-x", "node-y"], OK)),
    ("domains equal to minDomains use the real minimum", spread(1, "zone", min_domains=2), FOUR,
     foo_pods({"node-a": 1, "node-x": 1}), dict.fromkeys(["node-a", "node-b", "node-x", "node-y"], OK)),
    ("4 nodes < minDomains 5 on node key, empty node-x still fits", spread(1, "node", min_domains=5), FOUR,
     foo_pods({"node-a": 1, "node-b": 1, "node-y": 1}),
     {"node-a": UNSCHED, "node-b": UNSCHED, "node-x": OK, "node-y": UNSCHED}),
    ("minDomains counts only domains passing node affinity",
     spread(1, "node", min_domains=3).node_affinity_in("zone", ["zone1"]), FOUR,
     foo_pods({"node-a": 1}), {"node-a": UNSCHED, "node-b": OK, "node-x": OK, "node-y": OK}),
]

AFFINITY_NODES = [node("node-a", node="node-a", foo=""), node("node-b", node="node-b", foo=""),
                  node("node-c", node="node-c")]
AFFINITY_PODS = foo_pods({"node-a": 2, "node-b": 1})
TAINTED = [node("node-a", node="node-a"), node("node-b", node="node-b"),
           node("node-c", node="node-c").taint("node.kubernetes.io/unschedulable")]
TAINTED_PODS = foo_pods({"node-a": 1, "node-b": 2})

INCLUSION = [
    ("nodeAffinityPolicy Honor (default) skips node-c", spread(1, "node").node_selector({"foo": ""}),
     AFFINITY_NODES, AFFINITY_PODS, {"node-a": UNSCHED, "node-b": OK, "node-c": OK}),
    ("nodeAffinityPolicy Ignore counts node-c", spread(1, "node", node_affinity_policy="Ignore").node_selector(
        {"foo": ""}), AFFINITY_NODES, AFFINITY_PODS, {"node-a": UNSCHED, "node-b": UNSCHED, "node-c": OK}),
    ("nodeAffinityPolicy Honor with required node affinity",
     spread(1, "node").node_affinity_in("foo", [""]), AFFINITY_NODES, AFFINITY_PODS,
     {"node-a": UNSCHED, "node-b": OK, "node-c": OK}),
    ("nodeTaintsPolicy Ignore (default) counts the tainted node", spread(1, "node"), TAINTED, TAINTED_PODS,
     {"node-a": UNSCHED, "node-b": UNSCHED, "node-c": OK}),
    ("nodeTaintsPolicy Honor skips the tainted node", spread(1, "node", node_taints_policy="Honor"), TAINTED,
     TAINTED_PODS, {"node-a": OK, "node-b": UNSCHED, "node-c": OK}),
    ("nodeTaintsPolicy Honor, the taint is tolerated",
     spread(1, "node", node_taints_policy="Honor").toleration("node.kubernetes.io/unschedulable", operator="Exists"),
     TAINTED, TAINTED_PODS, {"node-a": UNSCHED, "node-b": UNSCHED, "node-c": OK}),
    ("nodeTaintsPolicy Honor ignores PreferNoSchedule taints", spread(1, "node", node_taints_policy="Honor"),
     [node("node-a", node="node-a"), node("node-b", node="node-b"),
      node("node-c", node="node-c").taint("soft", effect="PreferNoSchedule")], TAINTED_PODS,
     {"node-a": UNSCHED, "node-b": UNSCHED, "node-c": OK}),
]

LABEL_KEYS_PODS = [existing("p-a1", "node-a", foo="", version="v1"), existing("p-a2", "node-a", foo="", version="v1"),
                   existing("p-b1", "node-b", foo="", version="v2"), existing("p-b2", "node-b", foo="", version="v2"),
                   existing("p-b3", "node-b", foo="", version="v2")]
LABEL_KEYS = [
    ("without matchLabelKeys every foo pod counts", spread(1, "node", labels={"foo": "", "version": "v1"}),
     FOUR, LABEL_KEYS_PODS, {"node-a": UNSCHED, "node-b": UNSCHED, "node-x": OK, "node-y": OK}),
    ("matchLabelKeys restricts to the pod's version",
     spread(1, "node", labels={"foo": "", "version": "v1"}, match_label_keys=["version"]),
     FOUR, LABEL_KEYS_PODS, {"node-a": UNSCHED, "node-b": OK, "node-x": OK, "node-y": OK}),
    ("matchLabelKeys with a nil selector selects by the keys alone",
     spread(1, "node", None, labels={"version": "v2"}, match_label_keys=["version"]),
     FOUR, LABEL_KEYS_PODS, {"node-a": OK, "node-b": UNSCHED, "node-x": OK, "node-y": OK}),
    ("matchLabelKeys naming a label the pod lacks is ignored",
     spread(1, "node", labels={"foo": ""}, match_label_keys=["version"]),
     FOUR, LABEL_KEYS_PODS, {"node-a": UNSCHED, "node-b": UNSCHED, "node-x": OK, "node-y": OK}),
]

MULTIPLE = [
    ("zone and node, spreads 3/3 and 2/1/0/3: only node-x",
     spread(1, "zone").spread(1, "node", "DoNotSchedule", FOO), FOUR, SPREAD_2103,
     {"node-a": UNSCHED, "node-b": UNSCHED, "node-x": OK, "node-y": UNSCHED}),
    ("zone and node, spreads 3/4 and 2/1/0/4: zone1 nodes by zone, node-x by node, none both",
     spread(1, "zone").spread(1, "node", "DoNotSchedule", FOO), FOUR,
     foo_pods({"node-a": 2, "node-b": 1, "node-y": 4}),
     dict.fromkeys(["node-a", "node-b", "node-x", "node-y"], UNSCHED)),
    ("zone and node with different selectors",
     spread(1, "zone", labels={"foo": "", "bar": ""}).spread(1, "node", "DoNotSchedule", BAR), FOUR,
     [existing("p-a1", "node-a", foo=""), existing("p-b1", "node-b", bar=""),
      existing("p-y1", "node-y", foo=""), existing("p-y2", "node-y", bar="")],
     {"node-a": OK, "node-b": UNSCHED, "node-x": OK, "node-y": UNSCHED}),
    ("a node missing the second key is unresolvable",
     spread(1, "zone").spread(1, "node", "DoNotSchedule", FOO),
     [zn("node-a", "zone1"), node("node-b", zone="zone1"), zn("node-x", "zone2")], [],
     {"node-a": OK, "node-b": UNRESOLVABLE, "node-x": OK}),
    ("soft constraints are left to scoring",
     spread(1, "zone").spread(1, "node", "ScheduleAnyway", FOO), FOUR, SPREAD_2103,
     dict.fromkeys(["node-a", "node-b", "node-x", "node-y"], OK)),
    ("two constraints on one key with different selectors are kept apart",
     spread(1, "node", labels={"foo": "", "bar": ""}).spread(1, "node", "DoNotSchedule", BAR), FOUR,
     foo_pods({"node-a": 1, "node-b": 1, "node-x": 1}) + [existing("p-y1", "node-y", bar="")],
     {"node-a": UNSCHED, "node-b": UNSCHED, "node-x": UNSCHED, "node-y": UNSCHED}),
]


@pytest.mark.parametrize(("pod", "nodes", "pods", "want"),
                         [pytest.param(*c[1:], id=c[0]) for c in SINGLE + MIN_DOMAINS + INCLUSION + LABEL_KEYS
                          + MULTIPLE])
def test_filter(pod: MakePod, nodes: list[MakeNode], pods: list[Pod], want: dict[str, str]) -> None:
    got = run_filter(pod.info(), infos(nodes, pods))
    assert got == {name: EXPECTED[w] for name, w in want.items()}


@pytest.mark.parametrize(("pod", "nodes", "pods", "want"),
                         [pytest.param(*c[1:], id=c[0]) for c in SINGLE + MIN_DOMAINS + INCLUSION + LABEL_KEYS
                          + MULTIPLE])
def test_the_verdict_labels_alone_decide_filter(pod: MakePod, nodes: list[MakeNode], pods: list[Pod],
                                                want: dict[str, str]) -> None:
    """A walk asks Filter once per combination of `verdict_labels` values: every node with the
    same values must get the same verdict, and every constraint's key must be among them."""
    node_infos = infos(nodes, pods)
    info = pod.info()
    pl = plugin(node_infos)
    state = CycleState()
    pl.pre_filter(state, info, node_infos)
    keys = pl.verdict_labels(state)
    assert keys is not None
    assert set(keys) == {c.topology_key for c in state.read(PRE_FILTER_STATE_KEY).constraints}
    by_values: dict[tuple[str | None, ...], Status | None] = {}
    for n in node_infos:
        verdict = pl.filter(state, info, n)
        assert by_values.setdefault(tuple(n.labels.get(k) for k in keys), verdict) == verdict


def test_no_verdict_labels_without_pre_filter_state() -> None:
    assert plugin(infos(FOUR, [])).verdict_labels(CycleState()) is None


def test_pre_filter_state_two_constraints() -> None:
    nodes = infos(FOUR, foo_pods({"node-a": 2, "node-b": 1, "node-y": 4}))
    pod = spread(1, "zone").spread(1, "node", "DoNotSchedule", FOO).info()
    state = CycleState()
    plugin(nodes).pre_filter(state, pod, nodes)
    s = state.read(PRE_FILTER_STATE_KEY)
    assert s.tp_value_to_match_num == [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}]
    assert s.critical_paths[0].as_tuple() == (("zone1", 3), ("zone2", 4))
    assert s.critical_paths[1].as_tuple() == (("node-x", 0), ("node-b", 1))
    assert [c.min_domains for c in s.constraints] == [1, 1]


@pytest.mark.parametrize(("pod", "args", "selector"), [
    pytest.param(MakePod().name("p").label("foo", ""), None, None, id="no constraints, system defaulting"),
    pytest.param(MakePod().name("p").spread(1, "zone", "ScheduleAnyway", FOO), None, None, id="only soft"),
    pytest.param(MakePod().name("p").label("foo", ""),
                 {"defaultingType": "List", "defaultConstraints": [
                     {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]},
                 None, id="list defaults but no owning controller selector"),
    pytest.param(MakePod().name("p").label("foo", ""), None, selector_from_set({"foo": ""}),
                 id="system defaults are all soft"),
])
def test_pre_filter_skips(pod: MakePod, args: dict[str, Any] | None, selector: Any) -> None:
    nodes = infos(FOUR, [])
    pl = plugin(nodes, args, default_selector=(lambda p: selector) if selector else None)
    state = CycleState()
    assert pl.pre_filter(state, pod.info(), nodes) == (None, Status(Code.SKIP))
    assert state.get(PRE_FILTER_STATE_KEY) is None


def test_list_default_constraints_use_the_owning_selector() -> None:
    args = {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"}]}
    nodes = infos(FOUR, SPREAD_2103)
    pl = plugin(nodes, args, default_selector=lambda p: selector_from_set({"foo": ""}))
    got = run_filter(MakePod().name("p").label("foo", "").info(), nodes, pl)
    assert got == {"node-a": EXPECTED[UNSCHED], "node-b": EXPECTED[UNSCHED], "node-x": None,
                   "node-y": EXPECTED[UNSCHED]}


def test_own_constraints_win_over_defaults() -> None:
    args = {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"}]}
    nodes = infos(FOUR, SPREAD_2103)
    pl = plugin(nodes, args, default_selector=lambda p: selector_from_set({"foo": ""}))
    got = run_filter(spread(1, "zone").info(), nodes, pl)
    assert all(s is None for s in got.values())


def test_filter_without_pre_filter_state_is_an_error() -> None:
    nodes = infos(FOUR, [])
    status = plugin(nodes).filter(CycleState(), spread(1, "zone").info(), nodes[0])
    assert status is not None and status.code == Code.ERROR
    assert status.reasons == ('reading "PreFilterPodTopologySpread" from cycleState: not found',)


# -- PreFilter extensions (nominated pods, preemption what-ifs) ------------------------------

def _state(pod: PodInfo, nodes: list[NodeInfo]) -> tuple[PodTopologySpread, CycleState]:
    pl = plugin(nodes)
    state = CycleState()
    pl.pre_filter(state, pod, nodes)
    return pl, state


@pytest.mark.parametrize(("pod_to_update", "node_name", "delta", "want_counts", "want_paths"), [
    pytest.param(existing("new", "node-x", foo=""), "node-x", 1,
                 {"node-a": 2, "node-b": 1, "node-x": 1, "node-y": 3}, (("node-x", 1), ("node-b", 1)),
                 id="add a matching pod to the least loaded node"),
    pytest.param(existing("p-y0", "node-y", foo=""), "node-y", -1,
                 {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 2}, (("node-x", 0), ("node-b", 1)),
                 id="remove a matching pod"),
    pytest.param(existing("p-b0", "node-b", foo=""), "node-b", -1,
                 {"node-a": 2, "node-b": 0, "node-x": 0, "node-y": 3}, (("node-x", 0), ("node-b", 0)),
                 id="remove from the second critical path"),
    pytest.param(existing("other", "node-x", ns="ns1", foo=""), "node-x", 1,
                 {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 3}, (("node-x", 0), ("node-b", 1)),
                 id="a pod of another namespace is ignored"),
    pytest.param(existing("bar", "node-x", bar=""), "node-x", 1,
                 {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 3}, (("node-x", 0), ("node-b", 1)),
                 id="a pod the selector does not match is ignored"),
])
def test_add_remove_pod(pod_to_update: Pod, node_name: str, delta: int, want_counts: dict[str, int],
                        want_paths: tuple[Any, ...]) -> None:
    nodes = infos(FOUR, SPREAD_2103)
    pod = spread(1, "node").info()
    pl, state = _state(pod, nodes)
    ext = pl.pre_filter_extensions()
    target = next(n for n in nodes if n.name == node_name)
    fn = ext.add_pod if delta > 0 else ext.remove_pod
    assert fn(state, pod, PodInfo(pod_to_update), target) is None
    s = state.read(PRE_FILTER_STATE_KEY)
    assert s.tp_value_to_match_num == [want_counts]
    assert s.critical_paths[0].as_tuple() == want_paths


def test_add_pod_to_node_missing_a_key_is_ignored() -> None:
    nodes = infos([zn("node-a", "zone1"), node("node-b", zone="zone1")], [])
    pod = spread(1, "node").info()
    pl, state = _state(pod, nodes)
    pl.add_pod(state, pod, PodInfo(existing("new", "node-b", foo="")), nodes[1])
    assert state.read(PRE_FILTER_STATE_KEY).tp_value_to_match_num == [{"node-a": 0}]


def test_add_pod_honours_the_preemptor_node_affinity() -> None:
    nodes = infos(AFFINITY_NODES, [])
    pod = spread(1, "node").node_selector({"foo": ""}).info()
    pl, state = _state(pod, nodes)
    pl.add_pod(state, pod, PodInfo(existing("new", "node-c", foo="")), nodes[2])
    assert state.read(PRE_FILTER_STATE_KEY).tp_value_to_match_num == [{"node-a": 0, "node-b": 0}]


def test_preemption_what_if_on_a_cloned_state() -> None:
    nodes = infos(FOUR, SPREAD_2103)
    pod = spread(1, "node").info()
    pl, state = _state(pod, nodes)
    node_y = next(n for n in nodes if n.name == "node-y")
    what_if = state.clone()
    for victim in node_y.pods:
        pl.remove_pod(what_if, pod, victim, node_y)
    # 2/1/0/0: node-y now fits in the what-if, the original state is untouched.
    assert pl.filter(what_if, pod, node_y) is None
    assert pl.filter(state, pod, node_y) == EXPECTED[UNSCHED]
    assert state.read(PRE_FILTER_STATE_KEY).tp_value_to_match_num[0]["node-y"] == 3


def test_a_verdict_remembered_per_zone_follows_the_counts_when_a_pod_is_added() -> None:
    # Zones 3/3: everything fits; nodes of one zone share one verdict until the counts change.
    nodes = infos(FOUR, SPREAD_2103)
    pod = spread(1, "zone").info()
    pl, state = _state(pod, nodes)
    assert [pl.filter(state, pod, n) for n in nodes] == [None] * 4
    assert state.read(PRE_FILTER_STATE_KEY).verdicts == {"zone1": None, "zone2": None}
    node_x = next(n for n in nodes if n.name == "node-x")
    pl.add_pod(state, pod, PodInfo(existing("new", "node-x", foo="")), node_x)
    # zone2 has 4 now: adding the pod there makes the skew 2, zone1 still fits.
    got = {n.name: pl.filter(state, pod, n) for n in nodes}
    assert got == {"node-a": None, "node-b": None, "node-x": EXPECTED[UNSCHED], "node-y": EXPECTED[UNSCHED]}


# -- building blocks ----------------------------------------------------------------------

@pytest.mark.parametrize(("updates", "want"), [
    pytest.param([("a", 3), ("b", 1), ("c", 2)], (("b", 1), ("c", 2)), id="a smaller newcomer replaces the second"),
    pytest.param([("a", 0), ("b", 1), ("c", 2), ("b", 5)], (("a", 0), ("b", 5)),
                 id="second path is not necessarily the second minimum"),
    pytest.param([("a", 0), ("b", 0)], (("a", 0), ("b", 0)), id="ties keep arrival order"),
    pytest.param([("a", 1), ("b", 2), ("a", 3)], (("b", 2), ("a", 3)), id="an existing path growing swaps"),
    pytest.param([("a", 1), ("b", 2), ("b", 0)], (("b", 0), ("a", 1)), id="second path shrinking swaps"),
    pytest.param([], (("", 2**31 - 1), ("", 2**31 - 1)), id="empty"),
])
def test_critical_paths(updates: list[tuple[str, int]], want: tuple[Any, ...]) -> None:
    paths = CriticalPaths()
    for value, num in updates:
        paths.update(value, num)
    assert paths.as_tuple() == want


def test_state_clone_is_independent() -> None:
    nodes = infos(FOUR, SPREAD_2103)
    _, state = _state(spread(1, "node").info(), nodes)
    original: PreFilterState = state.read(PRE_FILTER_STATE_KEY)
    copy = original.clone()
    copy.tp_value_to_match_num[0]["node-a"] = 99
    copy.critical_paths[0].update("node-a", -1)
    assert original.tp_value_to_match_num[0]["node-a"] == 2
    assert original.critical_paths[0].as_tuple() == (("node-x", 0), ("node-b", 1))


def test_registered_and_events() -> None:
    assert plugin_class("PodTopologySpread") is PodTopologySpread
    A = events.ActionType
    assert PodTopologySpread.new(None, FakeHandle([])).events_to_register() == [  # type: ignore[arg-type]  # a stand-in: only its snapshot is read
        events.ClusterEvent(events.POD, A.ADD | A.UPDATE_POD_LABEL | A.UPDATE_POD_TOLERATION | A.DELETE),
        events.ClusterEvent(events.NODE, A.ADD | A.DELETE | A.UPDATE_NODE_LABEL | A.UPDATE_NODE_TAINT),
    ]


@pytest.mark.parametrize(("args", "message"), [
    pytest.param({"defaultingType": "Sometimes"}, 'defaultingType: Unsupported value: "Sometimes"', id="bad type"),
    pytest.param({"defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]},
                 'defaultingType: Invalid value: "System": when .defaultConstraints are not empty',
                 id="system defaulting with constraints"),
    pytest.param({"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]},
        "defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)", id="maxSkew"),
    pytest.param({"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": {"matchLabels": {"a": "b"}}}]},
        "defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector",
        id="selector forbidden"),
    pytest.param({"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
        {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]},
        'defaultConstraints[1]: Duplicate value: "{zone, DoNotSchedule}"', id="duplicate"),
    pytest.param({"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "", "whenUnsatisfiable": "Maybe"}]},
        "defaultConstraints[0].topologyKey: Required value: can not be empty", id="empty key and bad action"),
])
def test_invalid_args(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=None) as err:
        PodTopologySpread.new(args, FakeHandle([]))  # type: ignore[arg-type]  # a stand-in: only its snapshot is read
    assert message in str(err.value)
