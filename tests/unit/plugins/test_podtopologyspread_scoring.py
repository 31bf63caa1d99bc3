"""PodTopologySpread PreScore/Score/NormalizeScore: scores as upstream's scoring_test.go tables."""

from __future__ import annotations

import math
from typing import Any

import msgspec
import pytest

from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import NodeScore
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.snapshot import Snapshot
from shared.framework.status import Code, Status
from shared.model import Pod
from shared.model.selectors import Selector, selector_from_set
from shared.plugins.podtopologyspread import PodTopologySpread
from shared.plugins.podtopologyspread.plugin import PRE_SCORE_STATE_KEY
from shared.plugins.podtopologyspread.scoring import go_round
from tests.builders import MakeNode, MakePod

H = "kubernetes.io/hostname"
Z = "topology.kubernetes.io/zone"
FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}
LIST = {"defaultingType": "List"}


class FakeHandle:
    def __init__(self, infos: list[NodeInfo], memoize: bool = False) -> None:
        self._snapshot = Snapshot(infos)
        self.memoize = memoize

    def snapshot(self) -> Snapshot:
        return self._snapshot


def node(name: str, labels: dict[str, str] | None = None, **kw: str) -> MakeNode:
    return MakeNode().name(name).labels({**(labels or {}), **kw})


def host(name: str, **kw: str) -> MakeNode:
    return node(name, {H: name}, **kw)


def existing(name: str, node_name: str, ns: str = "default", terminating: bool = False, **labels: str) -> Pod:
    pod = MakePod().name(name).namespace(ns).node(node_name).labels(labels).obj()
    if terminating:
        meta = msgspec.structs.replace(pod.metadata, deletion_timestamp="2024-01-01T00:00:00Z")
        pod = msgspec.structs.replace(pod, metadata=meta)
    return pod


def foo_pods(spec: dict[str, int]) -> list[Pod]:
    return [existing(f"p-{n}{i}", n, foo="") for n, count in spec.items() for i in range(count)]


def soft(max_skew: int, key: str, selector: dict[str, Any] | None = FOO, labels: dict[str, str] | None = None,
         **kw: Any) -> MakePod:
    return MakePod().name("p").labels(labels if labels is not None else {"foo": ""}).spread(
        max_skew, key, "ScheduleAnyway", selector, **kw)


def build(nodes: list[MakeNode], pods: list[Pod]) -> list[NodeInfo]:
    out = []
    for mk in nodes:
        name = mk.obj().metadata.name
        out.append(mk.info(*[p for p in pods if p.spec.node_name == name]))
    return out


def run_scores(pod: MakePod, nodes: list[MakeNode], failed: list[MakeNode], pods: list[Pod],
               args: dict[str, Any] | None = LIST, selector: Selector | None = None,
               memoize: bool = False) -> dict[str, int]:
    candidates = build(nodes, pods)
    all_nodes = candidates + build(failed, pods)
    pl = PodTopologySpread.new(args, FakeHandle(all_nodes, memoize),  # type: ignore[arg-type]  # a stand-in: only its snapshot is read
                               default_selector=(lambda p: selector) if selector is not None else None)
    return _scores(pl, pod.info(), candidates)


def _scores(pl: PodTopologySpread, info: PodInfo, candidates: list[NodeInfo]) -> dict[str, int]:
    state = CycleState()
    assert pl.pre_score(state, info, candidates) is None
    scores = []
    for n in candidates:
        score, status = pl.score(state, info, n)
        assert status is None
        scores.append(NodeScore(n.name, score))
    assert pl.score_extensions().normalize_score(state, info, scores) is None
    return {s.name: s.score for s in scores}


HOSTS4 = [host("node-a"), host("node-b"), host("node-c"), host("node-d")]
ZONES4 = [host("node-a", zone="zone1"), host("node-b", zone="zone1"), host("node-x", zone="zone2"),
          host("node-y", zone="zone2")]
SPREAD_4_2_1_3 = foo_pods({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3})
SPREAD_4321 = foo_pods({"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1})
DIFFERENT_SELECTORS = [existing("p-a1", "node-a", foo=""), existing("p-b1", "node-b", foo="", bar=""),
                       existing("p-y1", "node-y", foo=""), existing("p-y2", "node-y", bar="")]
AFFINITY_NODES = [node("node-a", node="node-a", foo=""), node("node-b", node="node-b", foo=""),
                  node("node-c", node="node-c")]
TAINTED = [node("node-a", node="node-a"), node("node-b", node="node-b"),
           node("node-c", node="node-c").taint("node.kubernetes.io/unschedulable")]
A2_B1_C1 = foo_pods({"node-a": 2, "node-b": 1, "node-c": 1})
ZONES_CD = [host("node-a", zone="zone1"), host("node-b", zone="zone1"), host("node-c", zone="zone2"),
            host("node-d", zone="zone2")]
LABEL_KEY_PODS = [existing("p-a1", "node-a", foo=""), existing("p-b1", "node-b", foo="", bar=""),
                  existing("p-y1", "node-c", foo=""), existing("p-y2", "node-c", bar="")]

CASES = [
    ("one constraint on node, no existing pods", soft(1, H), [host("node-a"), host("node-b")], [], [],
     {"node-a": 100, "node-b": 100}),
    ("one constraint on node, only one node is candidate", soft(1, H), [host("node-a")], [host("node-b")],
     foo_pods({"node-a": 2, "node-b": 1}), {"node-a": 100}),
    ("one constraint on node, all nodes have the same number of matching pods", soft(1, H),
     [host("node-a"), host("node-b")], [], foo_pods({"node-a": 1, "node-b": 1}), {"node-a": 100, "node-b": 100}),
    ("one constraint on node, 2/1/0/3, all 4 candidates", soft(1, H), HOSTS4, [],
     foo_pods({"node-a": 2, "node-b": 1, "node-d": 3}), {"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0}),
    ("one constraint on node, null selector", soft(1, H, None), HOSTS4, [],
     foo_pods({"node-a": 2, "node-b": 1, "node-d": 3}),
     {"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100}),
    ("one constraint on node, 2/1/0/3, maxSkew 2", soft(2, H), HOSTS4, [],
     foo_pods({"node-a": 2, "node-b": 1, "node-d": 3}), {"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16}),
    ("one constraint on node, 4/3/2/1, maxSkew 3", soft(3, H), HOSTS4, [], SPREAD_4321,
     {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}),
    ("one constraint on node, 4/2/1/~3~", soft(1, H), [host("node-a"), host("node-b"), host("node-x")],
     [host("node-y")], SPREAD_4_2_1_3, {"node-a": 33, "node-b": 83, "node-x": 100}),
    ("one constraint on node, 4/?2?/1/~3~, node-b lacks the key", soft(1, H),
     [host("node-a"), node("node-b", n="node-b"), host("node-x")], [host("node-y")], SPREAD_4_2_1_3,
     {"node-a": 16, "node-b": 0, "node-x": 100}),
    ("one constraint on zone, 4/2/1/~3~", soft(1, "zone"), ZONES4[:3], ZONES4[3:], SPREAD_4_2_1_3,
     {"node-a": 75, "node-b": 75, "node-x": 100}),
    ("zone and node, 2/~1~/2/~4~", soft(1, "zone").spread(1, H, "ScheduleAnyway", FOO),
     [ZONES4[0], ZONES4[2]], [ZONES4[1], ZONES4[3]], foo_pods({"node-a": 2, "node-b": 1, "node-x": 2, "node-y": 4}),
     {"node-a": 100, "node-x": 63}),
    ("zone and node with different selectors", soft(1, "zone", labels={"foo": "", "bar": ""}).spread(
        1, H, "ScheduleAnyway", BAR), ZONES4, [], DIFFERENT_SELECTORS,
     {"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60}),
    ("zone and node with different selectors, some nodes have 0 pods",
     soft(1, "zone", labels={"foo": "", "bar": ""}).spread(1, H, "ScheduleAnyway", BAR), ZONES4, [],
     [existing("p-b1", "node-b", bar=""), existing("p-x1", "node-x", foo=""),
      existing("p-y1", "node-y", foo="", bar="")],
     {"node-a": 100, "node-b": 60, "node-x": 40, "node-y": 0}),
    ("zone and node with different selectors, 3 of 4 candidates",
     soft(1, "zone", labels={"foo": "", "bar": ""}).spread(1, H, "ScheduleAnyway", BAR), ZONES4[:3], ZONES4[3:],
     DIFFERENT_SELECTORS, {"node-a": 50, "node-b": 25, "node-x": 100}),
    ("existing pods in a different namespace do not count", soft(1, H), [host("node-a"), host("node-b")], [],
     [existing("p-a1", "node-a", ns="ns1", foo=""), existing("p-a2", "node-a", foo="")]
     + foo_pods({"node-b": 2}), {"node-a": 100, "node-b": 33}),
    ("terminating pods are excluded", soft(1, H), [host("node-a"), host("node-b")], [],
     [existing("p-a", "node-a", terminating=True, foo=""), existing("p-b", "node-b", foo="")],
     {"node-a": 100, "node-b": 0}),
    ("minDomains has no effect when ScheduleAnyway", soft(2, "node", min_domains=10),
     [node("node-a", node="node-a"), node("node-b", node="node-b"), node("node-c", node="node-c")], [],
     foo_pods({"node-a": 2, "node-b": 2, "node-c": 1}), {"node-a": 75, "node-b": 75, "node-c": 100}),
    ("nodeAffinityPolicy Honor with nodeSelector", soft(1, "node").node_selector({"foo": ""}), AFFINITY_NODES, [],
     A2_B1_C1, {"node-a": 0, "node-b": 33, "node-c": 100}),
    ("nodeAffinityPolicy Ignore with nodeSelector",
     soft(1, "node", node_affinity_policy="Ignore").node_selector({"foo": ""}), AFFINITY_NODES, [],
     A2_B1_C1, {"node-a": 66, "node-b": 100, "node-c": 100}),
    ("nodeAffinityPolicy Honor with node affinity", soft(1, "node").node_affinity_in("foo", [""]), AFFINITY_NODES, [],
     A2_B1_C1, {"node-a": 0, "node-b": 33, "node-c": 100}),
    ("nodeAffinityPolicy Ignore with node affinity",
     soft(1, "node", node_affinity_policy="Ignore").node_affinity_in("foo", [""]), AFFINITY_NODES, [],
     A2_B1_C1, {"node-a": 66, "node-b": 100, "node-c": 100}),
    ("nodeTaintsPolicy Honor", soft(1, "node", node_taints_policy="Honor"), TAINTED, [], A2_B1_C1,
     {"node-a": 0, "node-b": 33, "node-c": 100}),
    ("nodeTaintsPolicy Ignore (default)", soft(1, "node"), TAINTED, [], A2_B1_C1,
     {"node-a": 66, "node-b": 100, "node-c": 100}),
    ("matchLabelKeys ANDed with an empty selector",
     soft(1, "zone", {}, labels={"foo": "", "bar": ""}, match_label_keys=["foo"]).spread(
         1, H, "ScheduleAnyway", {}, match_label_keys=["bar"]), ZONES_CD, [], LABEL_KEY_PODS,
     {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100}),
    ("matchLabelKeys narrows by the pod's own value",
     soft(1, H, labels={"foo": "", "v": "1"}, match_label_keys=["v"]), HOSTS4[:2], [],
     [existing("p-a1", "node-a", foo="", v="1"), existing("p-b1", "node-b", foo="", v="2"),
      existing("p-b2", "node-b", foo="", v="2")], {"node-a": 0, "node-b": 100}),
]


@pytest.mark.parametrize("memoize", [False, True], ids=["counted", "kept sums"])
@pytest.mark.parametrize(("pod", "nodes", "failed", "pods", "want"), [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_score(pod: MakePod, nodes: list[MakeNode], failed: list[MakeNode], pods: list[Pod],
               want: dict[str, int], memoize: bool) -> None:
    assert run_scores(pod, nodes, failed, pods, memoize=memoize) == want


FOO_SERVICE = selector_from_set({"foo": ""})


# Zoneless nodes: raw a = 4*log6+2 + 7*log4+4 = 23, b = 21, c = 2*log6+2 = 6, d = 4 (the "" zone only
# counts towards the zone weight); reversed between 4 and 23.
@pytest.mark.parametrize(("nodes", "pods", "want"), [
    pytest.param(HOSTS4, SPREAD_4321, {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
                 id="nodes without zone still get hostname spreading, as one constraint"),
    pytest.param([host("node-a", **{Z: "mars"}), host("node-b", **{Z: "mars"}), host("node-c"), host("node-d")],
                 SPREAD_4321, {"node-a": 17, "node-b": 26, "node-c": 91, "node-d": 100},
                 id="zoneless nodes form the empty zone"),
])
@pytest.mark.parametrize("memoize", [False, True], ids=["counted", "kept sums"])
def test_system_default_constraints(nodes: list[MakeNode], pods: list[Pod], want: dict[str, int],
                                    memoize: bool) -> None:
    got = run_scores(MakePod().name("p").label("foo", ""), nodes, [], pods, None, FOO_SERVICE, memoize)
    assert got == want


def test_kept_sums_follow_the_pods_that_come_and_go_on_the_nodes() -> None:
    # One plugin keeps the domain sums between cycles; after each change to the nodes' pods its
    # scores equal those of a plugin that counts every node afresh.
    zones = [host(f"node-{i}", zone=f"zone{i % 3}") for i in range(9)]
    infos = build(zones, foo_pods({"node-0": 2, "node-4": 1, "node-8": 3}))
    pod = soft(1, "zone").spread(1, H, "ScheduleAnyway", FOO)
    kept = PodTopologySpread.new(LIST, FakeHandle(infos, memoize=True))  # type: ignore[arg-type]  # a stand-in
    afresh = PodTopologySpread.new(LIST, FakeHandle(infos))  # type: ignore[arg-type]  # a stand-in
    candidates = infos[1:7]
    placed: list[tuple[NodeInfo, PodInfo]] = []
    for step in range(12):
        want = _scores(afresh, pod.info(), candidates)
        assert _scores(kept, pod.info(), candidates) == want, step
        target = infos[(step * 4) % len(infos)]
        if step % 3 == 2 and placed:
            where, gone = placed.pop(0)
            where.remove_pod(gone)
        else:
            name = f"new-{step}"  # matched, then not
            pod_ = existing(name, target.name, foo="") if step % 2 == 0 else existing(name, target.name, bar="")
            added = PodInfo(pod_)
            target.add_pod(added)
            placed.append((target, added))


def test_system_default_pre_score_state() -> None:
    nodes = build([host("node-a", **{Z: "mars"}), host("node-b", **{Z: "mars"}), host("node-c"), host("node-d")], [])
    handle: Any = FakeHandle(nodes)
    pl = PodTopologySpread.new(None, handle, default_selector=lambda p: FOO_SERVICE)
    state = CycleState()
    assert pl.pre_score(state, MakePod().name("p").label("foo", "tar").info(), nodes) is None
    s = state.read(PRE_SCORE_STATE_KEY)
    assert [(c.topology_key, c.max_skew) for c in s.constraints] == [(H, 3), (Z, 5)]
    assert s.ignored_nodes == set()
    assert s.tp_value_to_pod_counts == [{}, {"mars": 0, "": 0}]
    assert s.weights == [math.log(6), math.log(4)]


def test_pre_score_state_ignores_nodes_missing_a_key() -> None:
    nodes = build([host("node-a", zone="zone1"), host("node-b", zone="zone1"), host("node-x")], [])
    pl = PodTopologySpread.new(LIST, FakeHandle(nodes))  # type: ignore[arg-type]  # a stand-in: only its snapshot is read
    state = CycleState()
    pod = soft(1, "zone").spread(1, H, "ScheduleAnyway", BAR).info()
    assert pl.pre_score(state, pod, nodes) is None
    s = state.read(PRE_SCORE_STATE_KEY)
    assert s.ignored_nodes == {"node-x"}
    assert s.tp_value_to_pod_counts == [{"zone1": 0}, {}]
    assert s.weights == [math.log(3), math.log(4)]


def test_list_default_constraints_drop_hard_ones_when_scoring() -> None:
    args = {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": H, "whenUnsatisfiable": "ScheduleAnyway"},
        {"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": "DoNotSchedule"},
        {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": "ScheduleAnyway"}]}
    nodes = build([node("node-a", {H: "node-a"}, rack="rack1", planet="mars")], [])
    handle: Any = FakeHandle(nodes)
    pl = PodTopologySpread.new(args, handle, default_selector=lambda p: FOO_SERVICE)
    state = CycleState()
    assert pl.pre_score(state, MakePod().name("p").label("foo", "tar").info(), nodes) is None
    s = state.read(PRE_SCORE_STATE_KEY)
    assert [(c.topology_key, c.max_skew) for c in s.constraints] == [(H, 1), ("planet", 2)]
    assert s.tp_value_to_pod_counts == [{}, {"mars": 0}]
    assert s.weights == [math.log(3), math.log(3)]


@pytest.mark.parametrize(("pod", "args", "nodes"), [
    pytest.param(MakePod().name("p"), LIST, [host("node-a"), host("node-b")], id="no soft constraints"),
    pytest.param(MakePod().name("p").label("foo", "bar"),
                 {"defaultingType": "List", "defaultConstraints": [
                     {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": "ScheduleAnyway"}]},
                 [node("node-a", planet="mars")], id="default constraints but no owning controller selector"),
    pytest.param(MakePod().name("p").label("foo", ""), None, [host("node-a")], id="system defaults, no selector"),
    pytest.param(soft(1, H), LIST, [], id="no nodes at all"),
    pytest.param(MakePod().name("p").spread(1, "zone", "DoNotSchedule", FOO), LIST, [host("node-a")],
                 id="only hard constraints"),
])
def test_pre_score_skips(pod: MakePod, args: dict[str, Any] | None, nodes: list[MakeNode]) -> None:
    infos = build(nodes, [])
    pl = PodTopologySpread.new(args, FakeHandle(infos))  # type: ignore[arg-type]  # a stand-in: only its snapshot is read
    state = CycleState()
    assert pl.pre_score(state, pod.info(), infos) == Status(Code.SKIP)
    assert state.get(PRE_SCORE_STATE_KEY) is None


def test_score_without_pre_score_state_is_an_error() -> None:
    infos = build([host("node-a")], [])
    pl = PodTopologySpread.new(LIST, FakeHandle(infos))  # type: ignore[arg-type]  # a stand-in: only its snapshot is read
    score, status = pl.score(CycleState(), soft(1, H).info(), infos[0])
    assert score == 0 and status is not None and status.code == Code.ERROR
    assert status.reasons == ('error reading "PreScorePodTopologySpread" from cycleState: not found',)


@pytest.mark.parametrize(("x", "want"), [(0.5, 1), (1.5, 2), (2.5, 3), (2.4999, 2), (0.0, 0), (-1.5, -2)],
                         ids=["half up", "odd half", "even half away from zero", "below half", "zero", "negative"])
def test_go_round(x: float, want: int) -> None:
    assert go_round(x) == want


def test_kept_sums_are_not_used_over_cloned_nodes() -> None:
    # A clone's changes are not in the NodeInfo journal: over clones the plugin counts afresh.
    zones = [host(f"node-{i}", zone=f"zone{i % 2}") for i in range(4)]
    clones = [info.clone() for info in build(zones, foo_pods({"node-0": 1}))]
    pod = soft(1, "zone")
    kept = PodTopologySpread.new(LIST, FakeHandle(clones, memoize=True))  # type: ignore[arg-type]  # a stand-in
    afresh = PodTopologySpread.new(LIST, FakeHandle(clones))  # type: ignore[arg-type]  # a stand-in
    assert _scores(kept, pod.info(), clones) == _scores(afresh, pod.info(), clones)
    clones[1].add_pod(PodInfo(existing("late", "node-1", foo="")))
    assert _scores(kept, pod.info(), clones) == _scores(afresh, pod.info(), clones)
