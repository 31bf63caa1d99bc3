"""InterPodAffinity PreFilter/Filter, ported from upstream's interpodaffinity filtering_test.go."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from shared.framework import events
from shared.framework.cycle_state import CycleState
from shared.framework.namespaces import NO_NAMESPACES
from shared.framework.pod_info import PodInfo
from shared.framework.snapshot import Snapshot
from shared.framework.status import Code, Status
from shared.model import Namespace, ObjectMeta
from shared.plugins.interpodaffinity import ERR_REASON_AFFINITY_RULES_NOT_MATCH as AFF
from shared.plugins.interpodaffinity import ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH as ANTI
from shared.plugins.interpodaffinity import ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH as EXISTING
from shared.plugins.interpodaffinity import (
    PRE_FILTER_STATE_KEY,
    InterPodAffinity,
    PreFilterState,
)
from shared.plugins.interpodaffinity.filtering import incoming_affinity_anti_affinity_counts
from shared.plugins.registry import plugin_class
from tests.builders import MakeNode, MakePod

from .interpodaffinity_support import exists, in_, not_exists, not_in, plugin, pod, snapshot, term

# -- PreFilter / Filter tables --------------------------------------------------------------------
SKIP = "skip"
A = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, AFF)
N = Status(Code.UNSCHEDULABLE, ANTI)
E = Status(Code.UNSCHEDULABLE, EXISTING)

SEC_SCAN = {"service": "securityscan"}
S1 = {"security": "S1"}
NODE1 = {"node1": {"region": "r1", "zone": "z11"}}
CHINA = {"region": "China"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
INDIA = {"region": "India"}
RZH_A = {"region": "r1", "zone": "z1", "hostname": "nodeA"}
RZH_B_SAME_ZONE = {"region": "r1", "zone": "z1", "hostname": "nodeB"}
RZH_B = {"region": "r1", "zone": "z2", "hostname": "nodeB"}
RZH_C = {"region": "r1", "zone": "z3", "hostname": "nodeC"}


def incoming(labels: Mapping[str, str] | None = None, ns: str = "default") -> MakePod:
    return pod(labels, ns=ns, name="incoming")


def run(pending: MakePod, existing: Sequence[MakePod], nodes: Mapping[str, Mapping[str, str]]
        ) -> tuple[Status | None, list[Status | None]]:
    snap = snapshot(nodes, existing)
    pl = plugin(snap)
    state = CycleState()
    pi = pending.info()
    _, status = pl.pre_filter(state, pi, snap.node_info_list)
    if status is not None:
        return status, []
    return None, [pl.filter(state, pi, snap.node_info_map[name]) for name in nodes]


def securityscan_on_node1() -> MakePod:
    return pod(SEC_SCAN, node="node1")


SINGLE_NODE = [
    ("no affinity and no existing pods skips PreFilter", incoming(), [], SKIP, None),
    ("affinity In matches the existing pod",
     incoming(S1).pod_affinity(term("region", in_("service", "securityscan", "value2"))),
     [securityscan_on_node1()], None, None),
    ("affinity NotIn matches the existing pod",
     incoming(S1).pod_affinity(term("region", not_in("service", "securityscan3", "value3"))),
     [securityscan_on_node1()], None, None),
    ("affinity fails because the existing pod is in another namespace",
     incoming(S1).pod_affinity(term("", in_("service", "securityscan", "value2"), namespaces=["DiffNameSpace"])),
     [pod(SEC_SCAN, node="node1", ns="ns")], None, A),
    ("affinity selector does not match the existing pod",
     incoming(SEC_SCAN).pod_affinity(term("", in_("service", "antivirusscan", "value2"))),
     [securityscan_on_node1()], None, A),
    ("several affinity terms with different operators all match",
     incoming(S1).pod_affinity(term("region", exists("service"), not_exists("wrongkey")))
     .pod_affinity(term("region", in_("service", "securityscan"), not_in("service", "WrongValue"))),
     [securityscan_on_node1()], None, None),
    ("matchExpressions are ANDed: one requirement fails",
     incoming(S1).pod_affinity(term("region", exists("service"), not_exists("wrongkey")))
     .pod_affinity(term("region", in_("service", "securityscan2"), not_in("service", "WrongValue"))),
     [securityscan_on_node1()], None, A),
    ("affinity and anti-affinity both satisfied",
     incoming(S1).pod_affinity(term("region", in_("service", "securityscan", "value2")))
     .pod_anti_affinity(term("node", in_("service", "antivirusscan", "value2"))),
     [securityscan_on_node1()], None, None),
    ("affinity, anti-affinity and symmetry satisfied",
     incoming(S1).pod_affinity(term("region", in_("service", "securityscan", "value2")))
     .pod_anti_affinity(term("node", in_("service", "antivirusscan", "value2"))),
     [securityscan_on_node1().pod_anti_affinity(term("node", in_("service", "antivirusscan", "value2")))],
     None, None),
    ("affinity satisfied but the incoming anti-affinity is not",
     incoming(S1).pod_affinity(term("region", in_("service", "securityscan", "value2")))
     .pod_anti_affinity(term("zone", in_("service", "securityscan", "value2"))),
     [securityscan_on_node1()], None, N),
    ("affinity and anti-affinity satisfied but the existing pod's anti-affinity is not",
     incoming(SEC_SCAN).pod_affinity(term("region", in_("service", "securityscan", "value2")))
     .pod_anti_affinity(term("node", in_("service", "antivirusscan", "value2"))),
     [securityscan_on_node1().pod_anti_affinity(term("zone", in_("service", "securityscan", "value2")))],
     None, E),
    ("pod matching its own NotIn term cannot rely on itself",
     incoming(SEC_SCAN).pod_affinity(term("region", not_in("service", "securityscan", "value2"))),
     [pod(SEC_SCAN, node="node2")], None, A),
    ("existing anti-affinity applies to a pod without affinity",
     incoming(SEC_SCAN),
     [securityscan_on_node1().pod_anti_affinity(term("zone", in_("service", "securityscan", "value2")))],
     None, E),
    ("existing anti-affinity not selecting the pod skips PreFilter",
     incoming(SEC_SCAN),
     [securityscan_on_node1().pod_anti_affinity(term("zone", not_in("service", "securityscan", "value2")))],
     SKIP, None),
    ("incoming anti-affinity violated while the existing pod's is satisfied",
     incoming(SEC_SCAN).pod_anti_affinity(term("region", exists("service")))
     .pod_anti_affinity(term("region", exists("security"))),
     [pod(S1, node="node1").pod_anti_affinity(term("zone", exists("security")))], None, N),
    ("symmetry a1: partial match on both sides, incoming checked first",
     incoming(SEC_SCAN).pod_anti_affinity(term("zone", exists("service")))
     .pod_anti_affinity(term("zone", exists("security"))),
     [pod(S1, node="node1").pod_anti_affinity(term("zone", exists("security")))], None, N),
    ("symmetry a2: the existing pod's term selects the incoming pod",
     incoming(S1).pod_anti_affinity(term("zone", exists("security"))),
     [securityscan_on_node1().pod_anti_affinity(term("zone", exists("service")))
      .pod_anti_affinity(term("zone", exists("security")))], None, E),
    ("symmetry b1",
     incoming({"abc": "", "xyz": ""}).pod_anti_affinity(term("zone", exists("abc")))
     .pod_anti_affinity(term("zone", exists("def"))),
     [pod({"def": "", "xyz": ""}, node="node1").pod_anti_affinity(term("zone", exists("abc")))
      .pod_anti_affinity(term("zone", exists("def")))], None, N),
    ("symmetry b2",
     incoming({"def": "", "xyz": ""}).pod_anti_affinity(term("zone", exists("abc")))
     .pod_anti_affinity(term("zone", exists("def"))),
     [pod({"abc": "", "xyz": ""}, node="node1").pod_anti_affinity(term("zone", exists("abc")))
      .pod_anti_affinity(term("zone", exists("def")))], None, N),
    ("affinity with a matching namespaceSelector",
     incoming(S1).pod_affinity(term("region", in_("service", "securityscan", "value2"), namespace_selector={
         "matchExpressions": [in_("team", "team1")]})),
     [pod(SEC_SCAN, node="node1", ns="subteam1.team1")], None, None),
    ("affinity with a non-matching namespaceSelector",
     incoming(S1).pod_affinity(term("region", in_("service", "securityscan", "value2"), namespace_selector={
         "matchExpressions": [in_("team", "team1")]})),
     [pod(SEC_SCAN, node="node1", ns="subteam1.team2")], None, A),
    ("anti-affinity with a matching namespaceSelector",
     incoming(S1, ns="subteam1.team1").pod_anti_affinity(
         term("zone", in_("service", "securityscan", "value2"), namespace_selector={
             "matchExpressions": [in_("team", "team1")]})),
     [pod(SEC_SCAN, node="node1", ns="subteam2.team1")], None, N),
    ("anti-affinity with an empty namespaceSelector matches every namespace",
     incoming(S1, ns="subteam1.team1").pod_anti_affinity(
         term("zone", in_("service", "securityscan", "value2"), namespace_selector={})),
     [pod(SEC_SCAN, node="node1", ns="subteam2.team1")], None, N),
    ("anti-affinity with a non-matching namespaceSelector",
     incoming(S1, ns="subteam1.team1").pod_anti_affinity(
         term("zone", in_("service", "securityscan", "value2"), namespace_selector={
             "matchExpressions": [in_("team", "team1")]})),
     [pod(SEC_SCAN, node="node1", ns="subteam1.team2")], None, None),
]


@pytest.mark.parametrize(("pending", "existing", "want_pre", "want"), [c[1:] for c in SINGLE_NODE],
                         ids=[c[0] for c in SINGLE_NODE])
def test_required_affinity_single_node(pending: MakePod, existing: list[MakePod], want_pre: str | None,
                                       want: Status | None) -> None:
    pre, got = run(pending, existing, NODE1)
    if want_pre == SKIP:
        assert pre == Status(Code.SKIP)
        return
    assert pre is None
    assert got == [want]


FOO_BAR = {"foo": "bar"}
MULTI_NODE = [
    ("nodes sharing the topology value with a matching pod all fit",
     incoming().pod_affinity(term("region", in_("foo", "bar"))),
     [pod(FOO_BAR, node="node1")],
     {"node1": CHINA, "node2": CHINA_AZ1, "node3": INDIA}, None, [None, None, A]),
    ("the first pod of a self-affine group may go to any node",
     incoming({"foo": "bar", "service": "securityscan"}).pod_affinity(term("zone", in_("foo", "bar")))
     .pod_affinity(term("zone", in_("service", "securityscan"))),
     [pod(FOO_BAR, node="nodeA")],
     {"nodeA": {"zone": "az1", "hostname": "h1"}, "nodeB": {"zone": "az2", "hostname": "h2"}}, None, [None, None]),
    ("the first pod of a group still needs the topology keys on the node",
     incoming({"foo": "bar", "service": "securityscan"}).pod_affinity(term("zone", in_("foo", "bar")))
     .pod_affinity(term("zone", in_("service", "securityscan"))),
     [pod(FOO_BAR, node="nodeA")],
     {"nodeA": {"zoneLabel": "az1", "hostname": "h1"}, "nodeB": {"zoneLabel": "az2", "hostname": "h2"}}, None,
     [A, A]),
    ("anti-affinity rejects every node of the matching pod's region",
     incoming().pod_anti_affinity(term("region", in_("foo", "abc"))),
     [pod({"foo": "abc"}, node="nodeA")],
     {"nodeA": {"region": "r1", "hostname": "nodeA"}, "nodeB": {"region": "r1", "hostname": "nodeB"}}, None, [N, N]),
    ("anti-affinity matches when any term matches",
     incoming().pod_anti_affinity(term("region", in_("foo", "abc")))
     .pod_anti_affinity(term("zone", in_("service", "securityscan"))),
     [pod({"foo": "abc", "service": "securityscan"}, node="nodeA")],
     {"nodeA": {"region": "r1", "zone": "z1", "hostname": "nodeA"},
      "nodeB": {"region": "r1", "zone": "z2", "hostname": "nodeB"}}, None, [N, N]),
    ("anti-affinity leaves other regions open",
     incoming().pod_anti_affinity(term("region", in_("foo", "abc"))),
     [pod({"foo": "abc"}, node="nodeA")],
     {"nodeA": CHINA, "nodeB": CHINA_AZ1, "nodeC": INDIA}, None, [N, N, None]),
    ("a pod in another namespace neither blocks nor is blocked",
     incoming({"foo": "123"}, ns="NS1").pod_anti_affinity(term("region", in_("foo", "bar"))),
     [pod(FOO_BAR, node="nodeA", ns="NS1"),
      pod(node="nodeC", ns="NS2").pod_anti_affinity(term("region", in_("foo", "123")))],
     {"nodeA": CHINA, "nodeB": CHINA_AZ1, "nodeC": INDIA}, None, [N, N, None]),
    ("existing anti-affinity with a topology key no node has skips PreFilter",
     incoming({"foo": ""}),
     [pod(node="nodeA").pod_anti_affinity(term("invalid-node-label", exists("foo")))],
     {"nodeA": RZH_A, "nodeB": RZH_B_SAME_ZONE}, SKIP, []),
    ("incoming anti-affinity needs the topology key as well as the selector",
     incoming().pod_anti_affinity(term("invalid-node-label", exists("foo"))),
     [pod({"foo": ""}, node="nodeA")],
     {"nodeA": RZH_A, "nodeB": RZH_B_SAME_ZONE}, None, [None, None]),
    ("each existing pod's terms reject the pod on every node",
     incoming({"foo": "", "bar": ""}),
     [pod(node="nodeA").pod_anti_affinity(term("zone", exists("foo"))),
      pod(node="nodeA").pod_anti_affinity(term("region", exists("bar")))],
     {"nodeA": RZH_A, "nodeB": RZH_B}, None, [E, E]),
    ("incoming anti-affinity violated by at least one term on each node",
     incoming().pod_anti_affinity(term("zone", exists("foo"))).pod_anti_affinity(term("region", exists("bar"))),
     [pod({"foo": ""}, node="nodeA"), pod({"bar": ""}, node="nodeB")],
     {"nodeA": RZH_A, "nodeB": RZH_B}, None, [N, N]),
    ("existing anti-affinity counts only terms whose selector and topology key both match",
     incoming({"foo": "", "bar": ""}),
     [pod(node="nodeA").pod_anti_affinity(term("invalid-node-label", exists("foo")))
      .pod_anti_affinity(term("zone", exists("bar")))],
     {"nodeA": RZH_A, "nodeB": RZH_B}, None, [E, None]),
    ("incoming anti-affinity counts only terms whose selector and topology key both match",
     incoming().pod_anti_affinity(term("invalid-node-label", exists("foo")))
     .pod_anti_affinity(term("zone", exists("bar"))),
     [pod({"foo": "", "bar": ""}, node="nodeA")],
     {"nodeA": RZH_A, "nodeB": RZH_B}, None, [N, None]),
    ("existing anti-affinity with all topology keys valid",
     incoming({"foo": "", "bar": ""}),
     [pod(node="nodeA").pod_anti_affinity(term("region", exists("foo")))
      .pod_anti_affinity(term("zone", exists("bar")))],
     {"nodeA": RZH_A, "nodeB": RZH_B}, None, [E, E]),
    ("incoming anti-affinity with all topology keys valid",
     incoming().pod_anti_affinity(term("region", exists("foo"))).pod_anti_affinity(term("zone", exists("bar"))),
     [pod({"foo": "", "bar": ""}, node="nodeA")],
     {"nodeA": RZH_A, "nodeB": RZH_B}, None, [N, N]),
    ("only nodeC escapes the existing pods' anti-affinity",
     incoming({"foo": "", "bar": ""}),
     [pod(node="nodeA").pod_anti_affinity(term("zone", exists("foo")))
      .pod_anti_affinity(term("zone", exists("labelA"))),
      pod(node="nodeB").pod_anti_affinity(term("zone", exists("bar")))
      .pod_anti_affinity(term("zone", exists("labelB")))],
     {"nodeA": RZH_A, "nodeB": RZH_B, "nodeC": RZH_C}, None, [E, E, None]),
    ("affinity terms all matched by one pod, then topology keys checked",
     incoming().pod_affinity(term("region", exists("foo"))).pod_affinity(term("zone", exists("bar"))),
     [pod({"foo": "", "bar": ""}, node="nodeA")],
     {"nodeA": RZH_A, "nodeB": RZH_B_SAME_ZONE}, None, [None, None]),
    ("affinity terms must be matched by the same pod",
     incoming().pod_affinity(term("region", exists("foo"))).pod_affinity(term("zone", exists("bar"))),
     [pod({"foo": ""}, node="nodeA"), pod({"bar": ""}, node="nodeB")],
     {"nodeA": RZH_A, "nodeB": RZH_B}, None, [A, A]),
]


@pytest.mark.parametrize(("pending", "existing", "nodes", "want_pre", "want"), [c[1:] for c in MULTI_NODE],
                         ids=[c[0] for c in MULTI_NODE])
def test_required_affinity_multiple_nodes(pending: MakePod, existing: list[MakePod],
                                          nodes: dict[str, dict[str, str]], want_pre: str | None,
                                          want: list[Status | None]) -> None:
    pre, got = run(pending, existing, nodes)
    if want_pre == SKIP:
        assert pre == Status(Code.SKIP)
        return
    assert pre is None
    assert got == want


# -- AddPod / RemovePod (TestPreFilterStateAddRemovePod) --------------------------------------------
ADD_REMOVE_NODES = {"nodeA": {"region": "r1", "zone": "z11"}, "nodeB": {"region": "r1", "zone": "z12"},
                    "nodeC": {"region": "r2", "zone": "z21"}}


def anti_foo_bar(p: MakePod) -> MakePod:
    return p.pod_anti_affinity(term("region", in_("foo", "bar")))


def anti_complex(p: MakePod) -> MakePod:
    return p.pod_anti_affinity(term("region", in_("foo", "bar", "buzz"))).pod_anti_affinity(
        term("zone", not_in("service", "bar", "security", "test")))


def affinity_complex(p: MakePod) -> MakePod:
    return p.pod_affinity(term("region", in_("foo", "bar", "buzz"))).pod_affinity(
        term("zone", not_in("service", "bar", "security", "test")))


def _existing_add_remove(second: MakePod) -> list[MakePod]:
    return [pod(FOO_BAR, node="nodeA", name="p1"), second]


ADD_REMOVE = [
    ("anti-affinity counts after adding and removing a pod",
     lambda: anti_foo_bar(pod(FOO_BAR, name="pending")),
     lambda: _existing_add_remove(anti_foo_bar(pod(node="nodeC", name="p2"))),
     lambda: anti_foo_bar(pod(FOO_BAR, node="nodeB", name="addedPod")),
     {("region", "r1"): 2}, {}),
    ("complex anti-affinity counts after adding and removing a pod",
     lambda: anti_complex(pod(FOO_BAR, name="pending")),
     lambda: _existing_add_remove(anti_foo_bar(pod(node="nodeC", name="p2"))),
     lambda: anti_complex(pod(FOO_BAR, node="nodeA", name="addedPod")),
     {("region", "r1"): 2, ("zone", "z11"): 2, ("zone", "z21"): 1}, {}),
    ("affinity counts after adding and removing a pod",
     lambda: affinity_complex(pod(FOO_BAR, name="pending")),
     lambda: _existing_add_remove(affinity_complex(anti_foo_bar(pod(node="nodeC", name="p2")))),
     lambda: anti_complex(pod(FOO_BAR, node="nodeA", name="addedPod")),
     {}, {("region", "r1"): 2, ("zone", "z11"): 2}),
]


def _state(pending: PodInfo, existing: list[MakePod]) -> tuple[InterPodAffinity, CycleState, Snapshot]:
    snap = snapshot(ADD_REMOVE_NODES, existing)
    pl = plugin(snap)
    state = CycleState()
    _, status = pl.pre_filter(state, pending, snap.node_info_list)
    assert status is None
    return pl, state, snap


def _counts(s: PreFilterState) -> tuple[dict[tuple[str, str], int], ...]:
    return s.existing_anti_affinity_counts, s.affinity_counts, s.anti_affinity_counts


@pytest.mark.parametrize(("pending", "existing", "added", "want_anti", "want_affinity"), [c[1:] for c in ADD_REMOVE],
                         ids=[c[0] for c in ADD_REMOVE])
def test_pre_filter_state_add_remove_pod(pending: Any, existing: Any, added: Any, want_anti: dict[tuple[str, str], int],
                                         want_affinity: dict[tuple[str, str], int]) -> None:
    pending_info = pending().info()
    added_pod = added()
    _, all_state, _ = _state(pending_info, [*existing(), added_pod])
    pl, state, snap = _state(pending_info, existing())
    before = state.read(PRE_FILTER_STATE_KEY)
    original = before.clone()
    added_info = added_pod.info()
    node_info = snap.get(added_info.pod.spec.node_name or "")
    assert node_info is not None
    ext = pl.pre_filter_extensions()
    assert ext.add_pod(state, pending_info, added_info, node_info) is None
    after = state.read(PRE_FILTER_STATE_KEY)
    assert after.anti_affinity_counts == want_anti
    assert after.affinity_counts == want_affinity
    assert _counts(after) == _counts(all_state.read(PRE_FILTER_STATE_KEY))
    assert ext.remove_pod(state, pending_info, added_info, node_info) is None
    assert _counts(after) == _counts(original)


def test_pre_filter_state_clone_is_independent() -> None:
    p = pod(name="p").info()
    source = PreFilterState(p, {("name", "node1"): 1, ("name", "node2"): 1}, {("name", "nodeA"): 1,
                            ("name", "nodeC"): 2}, {("name", "nodeN"): 3, ("name", "nodeM"): 1}, NO_NAMESPACES)
    clone = source.clone()
    assert clone is not source and _counts(clone) == _counts(source)
    clone.affinity_counts[("name", "nodeA")] = 5
    assert source.affinity_counts[("name", "nodeA")] == 1


def test_removing_a_pod_drops_counts_that_reach_zero() -> None:
    pending = pod(FOO_BAR, name="pending").pod_anti_affinity(term("region", in_("foo", "bar"))).info()
    pl, state, snap = _state(pending, [pod(FOO_BAR, node="nodeA", name="p1")])
    victim = snap.node_info_map["nodeA"].pods[0]
    assert pl.pre_filter_extensions().remove_pod(state, pending, victim, snap.node_info_map["nodeA"]) is None
    assert state.read(PRE_FILTER_STATE_KEY).anti_affinity_counts == {}
    assert pl.filter(state, pending, snap.node_info_map["nodeB"]) is None


def test_nominated_pod_added_to_state_blocks_its_topology() -> None:
    pending = pod(name="pending").pod_anti_affinity(term("region", in_("app", "db"))).info()
    pl, state, snap = _state(pending, [])
    nominated = pod({"app": "db"}, name="nominated").info()
    node_b = snap.get("nodeB")
    assert node_b is not None
    assert pl.pre_filter_extensions().add_pod(state, pending, nominated, node_b) is None
    assert [pl.filter(state, pending, snap.node_info_map[n]) for n in ADD_REMOVE_NODES] == [N, N, None]


# -- counts of the incoming pod's terms (TestGetTPMapMatchingIncomingAffinityAntiAffinity) ------------
HOST_A = {"nodeA": {"hostname": "nodeA"}}
COUNT_CASES = [
    ("nil test", [], pod(name="aaa-normal"), {}, {}),
    ("incoming pod without affinity is a no-op", [pod({"aaa": ""}, node="nodeA")], pod(name="aaa-normal"), {}, {}),
    ("no existing pod matches", [pod({"bbb": ""}, node="nodeA")],
     pod(name="aaa-anti").pod_affinity(term("hostname", exists("aaa")))
     .pod_anti_affinity(term("hostname", exists("aaa"))), {}, {}),
    ("single term matched by affinity and anti-affinity", [pod({"aaa": ""}, node="nodeA")],
     pod(name="x").pod_affinity(term("hostname", exists("aaa"))).pod_anti_affinity(term("hostname", exists("aaa"))),
     {("hostname", "nodeA"): 1}, {("hostname", "nodeA"): 1}),
    ("two affinity terms count once per term", [pod({"aaa": "", "bbb": ""}, node="nodeA")],
     pod(name="x").pod_affinity(term("hostname", exists("aaa"))).pod_affinity(term("hostname", exists("bbb")))
     .pod_anti_affinity(term("hostname", exists("aaa"))),
     {("hostname", "nodeA"): 2}, {("hostname", "nodeA"): 1}),
    ("affinity needs all terms, anti-affinity any", [pod({"aaa": ""}, node="nodeA")],
     pod(name="x").pod_affinity(term("hostname", exists("aaa"))).pod_affinity(term("hostname", exists("bbb")))
     .pod_anti_affinity(term("hostname", exists("aaa"))).pod_anti_affinity(term("hostname", exists("bbb"))),
     {}, {("hostname", "nodeA"): 1}),
    ("existing pod violates part of the anti-affinity, case 1", [pod({"aaa": "", "bbb": ""}, node="nodeA")],
     pod(name="x").pod_affinity(term("hostname", exists("aaa"))).pod_affinity(term("hostname", exists("ccc")))
     .pod_anti_affinity(term("hostname", exists("aaa"))).pod_anti_affinity(term("hostname", exists("ccc"))),
     {}, {("hostname", "nodeA"): 1}),
    ("existing pod violates part of the anti-affinity, case 2", [pod({"bbb": ""}, node="nodeA")],
     pod(name="x").pod_affinity(term("hostname", exists("aaa"))).pod_affinity(term("hostname", exists("bbb")))
     .pod_anti_affinity(term("hostname", exists("aaa"))).pod_anti_affinity(term("hostname", exists("bbb"))),
     {}, {("hostname", "nodeA"): 1}),
]


@pytest.mark.parametrize(("existing", "pending", "want_affinity", "want_anti"), [c[1:] for c in COUNT_CASES],
                         ids=[c[0] for c in COUNT_CASES])
def test_incoming_affinity_anti_affinity_counts(existing: list[MakePod], pending: MakePod,
                                                want_affinity: dict[tuple[str, str], int],
                                                want_anti: dict[tuple[str, str], int]) -> None:
    snap = snapshot(HOST_A, existing)
    affinity, anti = incoming_affinity_anti_affinity_counts(pending.info(), snap.node_info_list, snap.namespaces)
    assert affinity == want_affinity
    assert anti == want_anti


# -- plugin surface ----------------------------------------------------------------------------------
def test_filter_without_pre_filter_state_is_an_error() -> None:
    pl = plugin(snapshot({}, []))
    info = MakeNode().name("n").info()
    assert pl.filter(CycleState(), pod(name="p").info(), info) == Status(
        Code.ERROR, 'error reading "PreFilterInterPodAffinity" from cycleState: not found')


def test_registered_under_its_upstream_name() -> None:
    assert InterPodAffinity.NAME == "InterPodAffinity"
    assert plugin_class("InterPodAffinity") is InterPodAffinity


def test_events_to_register() -> None:
    A_ = events.ActionType
    assert plugin(snapshot({}, [])).events_to_register() == [
        events.ClusterEvent(events.POD, A_.ADD | A_.UPDATE_POD_LABEL | A_.DELETE),
        events.ClusterEvent(events.NODE, A_.ADD | A_.UPDATE_NODE_LABEL),
    ]


@pytest.mark.parametrize(("args", "weight", "ignore"), [
    (None, 1, False),
    ({}, 1, False),
    ({"hardPodAffinityWeight": 0}, 0, False),
    ({"hardPodAffinityWeight": 100, "ignorePreferredTermsOfExistingPods": True}, 100, True),
], ids=["none", "empty", "zero weight", "max weight and ignore"])
def test_args_defaulting(args: dict[str, Any] | None, weight: int, ignore: bool) -> None:
    pl = plugin(snapshot({}, []), args)
    assert (pl.args.hard_pod_affinity_weight, pl.args.ignore_preferred_terms_of_existing_pods) == (weight, ignore)


@pytest.mark.parametrize(("weight", "message"), [
    (-1, "hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]"),
    (101, "hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"),
], ids=["negative", "above 100"])
def test_args_validation(weight: int, message: str) -> None:
    with pytest.raises(ValueError) as err:
        plugin(snapshot({}, []), {"hardPodAffinityWeight": weight})
    assert str(err.value) == message


def _with_label_keys(t: dict[str, Any], match: list[str] | None = None,
                     mismatch: list[str] | None = None) -> dict[str, Any]:
    if match:
        t["matchLabelKeys"] = match
    if mismatch:
        t["mismatchLabelKeys"] = mismatch
    return t


LABEL_KEYS = [
    ("matchLabelKeys: another version does not repel", {"app": "web", "version": "v2"},
     _with_label_keys(term("hostname", in_("app", "web")), match=["version"]), [None, None]),
    ("matchLabelKeys: the same version repels", {"app": "web", "version": "v1"},
     _with_label_keys(term("hostname", in_("app", "web")), match=["version"]), [N, None]),
    ("mismatchLabelKeys: another version repels", {"app": "web", "version": "v2"},
     _with_label_keys(term("hostname", in_("app", "web")), mismatch=["version"]), [N, None]),
]


@pytest.mark.parametrize(("labels", "anti_term", "want"), [c[1:] for c in LABEL_KEYS], ids=[c[0] for c in LABEL_KEYS])
def test_anti_affinity_with_label_keys(labels: dict[str, str], anti_term: dict[str, Any],
                                       want: list[Status | None]) -> None:
    pre, got = run(incoming(labels).pod_anti_affinity(anti_term),
                   [pod({"app": "web", "version": "v1"}, node="nodeA")],
                   {"nodeA": {"hostname": "nodeA"}, "nodeB": {"hostname": "nodeB"}})
    assert pre is None
    assert got == want


def test_only_preferred_terms_skip_pre_filter() -> None:
    pre, _ = run(incoming().pod_affinity(term("zone", exists("foo")), weight=3),
                 [pod({"foo": ""}, node="nodeA")], {"nodeA": RZH_A})
    assert pre == Status(Code.SKIP)


def test_a_namespace_relabelled_moves_its_pods_into_a_selector() -> None:
    # The same snapshot before and after: PreFilter's kept counts must follow the namespace's labels.
    snap = snapshot(NODE1, [pod(SEC_SCAN, node="node1", ns="subteam1.team2")])
    pl = plugin(snap)
    pending = incoming(S1).pod_affinity(term("region", in_("service", "securityscan"),
                                             namespace_selector={"matchExpressions": [in_("team", "team1")]}))
    node = snap.get("node1")
    assert node is not None

    def filtered() -> Status | None:
        state = CycleState()
        _, status = pl.pre_filter(state, pending.info(), snap.node_info_list)
        assert status is None
        return pl.filter(state, pending.info(), node)

    assert filtered() == A
    snap.namespaces.upsert(Namespace(metadata=ObjectMeta(name="subteam1.team2", labels={"team": "team1"})))
    assert filtered() is None


def test_undeclared_namespaces_carry_only_their_name_label() -> None:
    selector = {"matchExpressions": [in_("kubernetes.io/metadata.name", "ns-a")]}
    pending = incoming(S1).pod_affinity(term("region", in_("service", "securityscan"), namespace_selector=selector))
    pre, got = run(pending, [pod(SEC_SCAN, node="node1", ns="ns-a")], NODE1)
    assert pre is None and got == [None]
    pre, got = run(pending, [pod(SEC_SCAN, node="node1", ns="ns-b")], NODE1)
    assert pre is None and got == [A]
