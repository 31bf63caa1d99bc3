"""InterPodAffinity PreScore/Score/NormalizeScore, ported from upstream's interpodaffinity
scoring_test.go (TestPreferredAffinity, TestPreferredAffinityWithHardPodAffinitySymmetricWeight).

The namespaces are upstream's fixture (`TEAM_NAMESPACES`: two teams of two namespaces labelled
with their team), which the namespace selectors select by label.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import MAX_NODE_SCORE, NodeScore
from shared.framework.status import Code, Status
from shared.plugins.interpodaffinity import PRE_SCORE_STATE_KEY, PreScoreState
from tests.builders import MakePod
from tests.unit.plugins.interpodaffinity_support import (
    exists,
    in_,
    not_exists,
    not_in,
    plugin,
    pod,
    snapshot,
    term,
)

MAX = MAX_NODE_SCORE
SKIP = "skip"
CHINA = {"region": "China"}
INDIA = {"region": "India"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
S1 = {"security": "S1"}
S2 = {"security": "S2"}
TEAM1 = {"matchExpressions": [in_("team", "team1")]}


def stay_with_s1_in_region(p: MakePod) -> MakePod:
    return p.pod_affinity(term("region", in_("security", "S1")), weight=5)


def stay_with_s2_in_region(p: MakePod) -> MakePod:
    return p.pod_affinity(term("region", in_("security", "S2")), weight=6)


def affinity3(p: MakePod) -> MakePod:
    return p.pod_affinity(term("region", not_in("security", "S1"), in_("security", "S2")), weight=8).pod_affinity(
        term("region", exists("security"), not_exists("wrongkey")), weight=2)


def hard_affinity(p: MakePod) -> MakePod:
    return p.pod_affinity(term("region", in_("security", "S1", "value2"))).pod_affinity(
        term("region", exists("security"), not_exists("wrongkey")))


def away_from_s1_in_az(p: MakePod) -> MakePod:
    return p.pod_anti_affinity(term("az", in_("security", "S1")), weight=5)


def away_from_s2_in_az(p: MakePod) -> MakePod:
    return p.pod_anti_affinity(term("az", in_("security", "S2")), weight=5)


def stay_with_s1_away_from_s2(p: MakePod) -> MakePod:
    return p.pod_affinity(term("region", in_("security", "S1")), weight=8).pod_anti_affinity(
        term("az", in_("security", "S2")), weight=5)


def affinity_ns_selector(p: MakePod) -> MakePod:
    return p.pod_affinity(term("region", in_("security", "S1"), namespaces=["subteam2.team2"],
                               namespace_selector=TEAM1), weight=5)


def anti_affinity_ns_selector(p: MakePod) -> MakePod:
    return p.pod_anti_affinity(term("region", in_("security", "S1"), namespaces=["subteam2.team2"],
                                    namespace_selector=TEAM1), weight=5)


def incoming(labels: Mapping[str, str] | None = None, ns: str = "default") -> MakePod:
    return pod(labels, ns=ns, name="incoming")


def run(pending: MakePod, existing: Sequence[MakePod], nodes: Mapping[str, Mapping[str, str]],
        args: Mapping[str, Any] | None = None) -> Status | list[int]:
    """PreScore's non-success status, or the normalised scores in the order of `nodes`."""
    snap = snapshot(nodes, existing)
    pl = plugin(snap, args)
    state = CycleState()
    pi = pending.info()
    status = pl.pre_score(state, pi, snap.node_info_list)
    if status is not None:
        return status
    scores = []
    for name in nodes:
        info = snap.get(name)
        assert info is not None
        score, s = pl.score(state, pi, info)
        assert s is None
        scores.append(NodeScore(name, score))
    assert pl.score_extensions().normalize_score(state, pi, scores) is None
    return [s.score for s in scores]


THREE = {"node1": CHINA, "node2": INDIA, "node3": AZ1}
PREFERRED = [
    ("all nodes equal when the pod has no affinity and no pod has any", incoming(S1), [], THREE, SKIP),
    ("affinity: topology key and matching pods score high",
     stay_with_s1_in_region(incoming(S1)),
     [pod(S1, node="node1"), pod(S2, node="node2"), pod(S1, node="node3")], THREE, [MAX, 0, 0]),
    ("nodes sharing the topology value of a matching pod score the same",
     stay_with_s1_in_region(incoming()), [pod(S1, node="node1")],
     {"node1": CHINA, "node2": CHINA_AZ1, "node3": INDIA}, [MAX, MAX, 0]),
    ("the region with more matching pods scores higher",
     stay_with_s2_in_region(incoming(S1)),
     [pod(S2, node="node1"), pod(S2, node="node1"), pod(S2, node="node2"), pod(S2, node="node3"),
      pod(S2, node="node4"), pod(S2, node="node5")],
     {"node1": CHINA, "node2": INDIA, "node3": CHINA, "node4": CHINA, "node5": INDIA}, [MAX, 0, MAX, MAX, 0]),
    ("different operators with some match failures",
     affinity3(incoming(S1)), [pod(S1, node="node1"), pod(S2, node="node2"), pod(S1, node="node3")], THREE,
     [20, MAX, 0]),
    ("symmetry: existing pods' preferred affinity",
     incoming(S2), [stay_with_s1_in_region(pod(S1, node="node1")), stay_with_s2_in_region(pod(S2, node="node2"))],
     THREE, [0, MAX, 0]),
    ("symmetry: existing pod's preferred affinity with a namespace selector",
     incoming(S1, ns="subteam1.team1"),
     [affinity_ns_selector(pod(S1, node="node1")), stay_with_s2_in_region(pod(S2, node="node2"))],
     THREE, [MAX, 0, 0]),
    ("symmetry: existing pod's preferred anti-affinity with a namespace selector",
     incoming(S1, ns="subteam1.team1"),
     [anti_affinity_ns_selector(pod(S1, node="node1")), stay_with_s2_in_region(pod(S2, node="node2"))],
     THREE, [0, MAX, MAX]),
    ("symmetry: existing pods' required affinity weighted by hardPodAffinityWeight",
     incoming(S1), [hard_affinity(pod(S1, node="node1")), hard_affinity(pod(S2, node="node2"))],
     THREE, [MAX, MAX, 0]),
    ("anti-affinity: node without matching pods scores high",
     away_from_s1_in_az(incoming(S1)), [pod(S1, node="node1"), pod(S2, node="node2")],
     {"node1": AZ1, "node2": CHINA}, [0, MAX]),
    ("anti-affinity: node without the topology key scores high",
     away_from_s1_in_az(incoming(S1)), [pod(S1, node="node1"), pod(S1, node="node2")],
     {"node1": AZ1, "node2": CHINA}, [0, MAX]),
    ("anti-affinity: the node with more matching pods scores low",
     away_from_s1_in_az(incoming(S1)), [pod(S1, node="node1"), pod(S1, node="node1"), pod(S2, node="node2")],
     {"node1": AZ1, "node2": INDIA}, [0, MAX]),
    ("anti-affinity symmetry",
     incoming(S2), [away_from_s2_in_az(pod(S1, node="node1")), away_from_s1_in_az(pod(S2, node="node2"))],
     {"node1": AZ1, "node2": AZ2}, [0, MAX]),
    ("affinity and anti-affinity together",
     stay_with_s1_away_from_s2(incoming(S1)), [pod(S1, node="node1"), pod(S1, node="node2")],
     {"node1": CHINA, "node2": AZ1}, [MAX, 0]),
    ("affinity and anti-affinity with pods of the same service",
     stay_with_s1_away_from_s2(incoming(S1)),
     [pod(S1, node="node1"), pod(S1, node="node1"), pod(S1, node="node2"), pod(S1, node="node3"),
      pod(S1, node="node3"), pod(S1, node="node4"), pod(S1, node="node5")],
     {"node1": CHINA_AZ1, "node2": INDIA, "node3": CHINA, "node4": CHINA, "node5": INDIA}, [MAX, 0, MAX, MAX, 0]),
    ("affinity, anti-affinity and symmetry together",
     stay_with_s1_away_from_s2(incoming(S1)),
     [pod(S1, node="node1"), pod(S2, node="node2"), stay_with_s1_away_from_s2(pod(node="node3")),
      away_from_s1_in_az(pod(node="node4"))],
     {"node1": CHINA, "node2": AZ1, "node3": INDIA, "node4": AZ2}, [MAX, 0, MAX, 0]),
    ("nodes of a topology without pods with affinity do not break scoring",
     incoming(S1), [pod(S1, node="node1"), stay_with_s1_away_from_s2(pod(node="node2"))],
     {"node1": CHINA, "node2": CHINA}, [0, 0]),
    ("affinity with pods matching the namespace selector",
     affinity_ns_selector(incoming(S1, ns="subteam1.team1")),
     [pod(S1, node="node1", ns="subteam1.team1"), pod(S1, node="node1", ns="subteam1.team1"),
      pod(S1, node="node1", ns="subteam1.team2"), pod(S1, node="node2", ns="subteam2.team1")],
     {"node1": CHINA, "node2": INDIA}, [MAX, 0]),
    ("affinity with pods matching both the namespace selector and the namespaces",
     affinity_ns_selector(incoming(S1, ns="subteam1.team1")),
     [pod(S1, node="node1", ns="subteam1.team1"), pod(S1, node="node1", ns="subteam1.team1"),
      pod(S1, node="node1", ns="subteam2.team2"), pod(S1, node="node2", ns="subteam2.team1")],
     {"node1": CHINA, "node2": INDIA}, [MAX, 0]),
    ("anti-affinity with pods matching the namespace selector",
     anti_affinity_ns_selector(incoming(S1, ns="subteam1.team1")),
     [pod(S1, node="node1", ns="subteam1.team1"), pod(S1, node="node1", ns="subteam1.team1"),
      pod(S1, node="node1", ns="subteam1.team2"), pod(S1, node="node2", ns="subteam2.team1")],
     {"node1": CHINA, "node2": INDIA}, [0, MAX]),
    ("anti-affinity with pods matching both the namespace selector and the namespaces",
     anti_affinity_ns_selector(incoming(S1, ns="subteam1.team1")),
     [pod(S1, node="node1", ns="subteam1.team1"), pod(S1, node="node1", ns="subteam1.team1"),
      pod(S1, node="node1", ns="subteam2.team2"), pod(S1, node="node2", ns="subteam2.team1")],
     {"node1": CHINA, "node2": INDIA}, [0, MAX]),
    ("no nodes to score", incoming(S2), [], {}, SKIP),
]


@pytest.mark.parametrize(("pending", "existing", "nodes", "want"), [c[1:] for c in PREFERRED],
                         ids=[c[0] for c in PREFERRED])
def test_preferred_affinity(pending: MakePod, existing: list[MakePod], nodes: dict[str, dict[str, str]],
                            want: str | list[int]) -> None:
    got = run(pending, existing, nodes, {"hardPodAffinityWeight": 1})
    assert got == (Status(Code.SKIP) if want == SKIP else want)


def _ignore_case_pods() -> list[MakePod]:
    return [stay_with_s1_away_from_s2(pod(S1, node="node1")), stay_with_s2_in_region(pod(S2, node="node2"))]


@pytest.mark.parametrize(("ignore", "want"), [(True, SKIP), (False, [0, MAX])],
                         ids=["ignore preferred terms of existing pods", "do not ignore preferred terms"])
def test_ignore_preferred_terms_of_existing_pods(ignore: bool, want: str | list[int]) -> None:
    got = run(incoming(S2), _ignore_case_pods(), {"node1": CHINA, "node2": INDIA},
              {"ignorePreferredTermsOfExistingPods": ignore})
    assert got == (Status(Code.SKIP) if want == SKIP else want)


def test_ignore_still_counts_existing_preferred_terms_when_the_pod_has_its_own() -> None:
    # Only PreScore's early skip depends on the option: with preferred terms of its own, the
    # incoming pod still sees the existing pods' preferred terms (node2's +6 for S2 in India).
    pending = incoming(S2).pod_affinity(term("zone", exists("nothing")), weight=1)
    got = run(pending, _ignore_case_pods(), {"node1": CHINA, "node2": INDIA},
              {"ignorePreferredTermsOfExistingPods": True})
    assert got == [0, MAX]


def hard_pod_affinity(p: MakePod) -> MakePod:
    return p.pod_affinity(term("region", in_("service", "S1"), namespaces=["default", "subteam2.team2"],
                               namespace_selector=TEAM1))


SERVICE_S1 = {"service": "S1"}
HARD_WEIGHT = [
    ("with default weight", incoming(SERVICE_S1), None, [MAX, MAX, 0]),
    ("with zero weight", incoming(SERVICE_S1), {"hardPodAffinityWeight": 0}, SKIP),
    ("with no matching namespace", incoming(SERVICE_S1, ns="subteam1.team2"), None, SKIP),
    ("with matching namespace selector", incoming(SERVICE_S1, ns="subteam1.team1"), None, [MAX, MAX, 0]),
    ("with matching namespaces", incoming(SERVICE_S1, ns="subteam2.team2"), None, [MAX, MAX, 0]),
]


@pytest.mark.parametrize(("pending", "args", "want"), [c[1:] for c in HARD_WEIGHT], ids=[c[0] for c in HARD_WEIGHT])
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(
        pending: MakePod, args: dict[str, Any] | None, want: str | list[int]) -> None:
    existing = [hard_pod_affinity(pod(node="node1")), hard_pod_affinity(pod(node="node2"))]
    got = run(pending, existing, THREE, args)
    assert got == (Status(Code.SKIP) if want == SKIP else want)


def test_hard_pod_affinity_weight_scales_the_raw_score() -> None:
    snap = snapshot(THREE, [hard_pod_affinity(pod(node="node1"))])
    pl = plugin(snap, {"hardPodAffinityWeight": 7})
    state = CycleState()
    pi = incoming(SERVICE_S1).info()
    assert pl.pre_score(state, pi, snap.node_info_list) is None
    assert [pl.score(state, pi, snap.node_info_map[n])[0] for n in THREE] == [7, 0, 0]


@pytest.mark.parametrize(("raw", "want"), [
    ([-5, 0, 3], [0, 62, 100]),
    ([2, 10, 0], [20, 100, 0]),
    ([-6, -6], [0, 0]),
    ([1, 2, 3], [0, 50, 100]),
    ([0, 7, 3], [0, 100, 42]),
], ids=["negative minimum", "upstream 20/100/0", "all equal", "positive minimum", "truncation"])
def test_normalize_score_min_max(raw: list[int], want: list[int]) -> None:
    pl = plugin(snapshot({}, []))
    state = CycleState()
    state.write(PRE_SCORE_STATE_KEY, PreScoreState(incoming().info(), {"zone": {"a": 1}}))
    scores = [NodeScore(f"n{i}", s) for i, s in enumerate(raw)]
    assert pl.normalize_score(state, incoming().info(), scores) is None
    assert [s.score for s in scores] == want


def test_normalize_score_leaves_scores_alone_without_topology_scores() -> None:
    pl = plugin(snapshot({}, []))
    state = CycleState()
    state.write(PRE_SCORE_STATE_KEY, PreScoreState(incoming().info(), {}))
    scores = [NodeScore("a", 3), NodeScore("b", 5)]
    assert pl.normalize_score(state, incoming().info(), scores) is None
    assert [s.score for s in scores] == [3, 5]


def test_score_without_pre_score_state_is_an_error() -> None:
    snap = snapshot({"node1": CHINA}, [])
    pl = plugin(snap)
    _, status = pl.score(CycleState(), incoming().info(), snap.node_info_map["node1"])
    assert status == Status(Code.ERROR, 'failed to read "PreScoreInterPodAffinity" from cycleState: not found')


def test_pre_score_state_clone_is_shared() -> None:
    s = PreScoreState(incoming().info(), {"zone": {"a": 1}})
    assert s.clone() is s
