"""InterPodAffinity's PreFilter counts kept from the change journal equal the counts made afresh,
after any sequence of pods placed on and removed from nodes, for any incoming pod."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.snapshot import Snapshot
from shared.plugins.interpodaffinity.counts_memo import CountsMemo, ScoresMemo
from shared.plugins.interpodaffinity.filtering import (
    existing_anti_affinity_counts,
    incoming_affinity_anti_affinity_counts,
)
from shared.plugins.interpodaffinity.scoring import ScoreMap, topology_scores
from tests.builders import MakeNode, MakePod

ZONES, HOSTS = 3, 8
APPS = ("web", "db", "cache")


def _pod(name: str, app: str, namespace: str, kind: int, key: str) -> PodInfo:
    """kind 0: no terms; 1: anti-affinity to its own app; 2: affinity to "db"; 3: both, and
    anti-affinity to "cache" in another namespace list; 4: preferred affinity to "web" and
    preferred anti-affinity to its own app; 5: 2 and 4 together."""
    b = MakePod().name(name).namespace(namespace).uid(f"{namespace}/{name}").label("app", app).req(cpu="10m")
    if kind in (1, 3):
        b = b.pod_anti_affinity(MakePod.term(key, {"app": app}))
    if kind in (2, 3):
        b = b.pod_affinity(MakePod.term(key, {"app": "db"}))
    if kind == 3:
        b = b.pod_anti_affinity(MakePod.term(key, {"app": "cache"}, namespaces=["default", "other"]))
    if kind in (4, 5):
        b = b.pod_affinity(MakePod.term(key, {"app": "web"}), weight=7)
        b = b.pod_anti_affinity(MakePod.term(key, {"app": app}), weight=3)
    if kind == 5:
        b = b.pod_affinity(MakePod.term(key, {"app": "db"}))
    return PodInfo(b.obj())


pods = st.builds(_pod, st.uuids().map(lambda u: u.hex[:8]), st.sampled_from(APPS),
                 st.sampled_from(["default", "other"]), st.integers(0, 5),
                 st.sampled_from(["kubernetes.io/hostname", "zone"]))
steps = st.lists(st.tuples(st.booleans(), st.integers(0, HOSTS - 1), pods), max_size=40)


def _fresh(pod: PodInfo, snapshot: Snapshot) -> tuple[dict, dict, dict]:
    existing = existing_anti_affinity_counts(pod, snapshot.have_pods_with_required_anti_affinity_list(),
                                             snapshot.namespaces)
    affinity, anti = incoming_affinity_anti_affinity_counts(pod, snapshot.node_info_list, snapshot.namespaces)
    return existing, affinity, anti


def _scored(kept: tuple[ScoreMap | None] | None) -> ScoreMap | None:
    """The memo's scores without values summing to 0 (they score nothing)."""
    assert kept is not None
    (scores,) = kept
    if scores is None:
        return None
    return {k: {v: w for v, w in values.items() if w} for k, values in scores.items() if any(values.values())}


def _fresh_scores(pod: PodInfo, snapshot: Snapshot, all_pods: bool) -> ScoreMap | None:
    nodes = snapshot.node_info_list if all_pods else snapshot.have_pods_with_affinity_list()
    scores = topology_scores(pod, nodes, all_pods, 1, snapshot.namespaces)
    if scores is None:
        return None
    return {k: {v: w for v, w in values.items() if w} for k, values in scores.items() if any(values.values())}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=steps, incoming=st.lists(pods, min_size=1, max_size=3), check_every=st.integers(1, 5))
def test_journaled_counts_equal_fresh_counts(steps: list[tuple[bool, int, PodInfo]], incoming: list[PodInfo],
                                             check_every: int) -> None:
    nodes = [NodeInfo(MakeNode().name(f"h{i}").label("zone", f"z{i % ZONES}")
                      .label("kubernetes.io/hostname", f"h{i}").obj()) for i in range(HOSTS)]
    snapshot = Snapshot(nodes)
    memo, scores = CountsMemo(), ScoresMemo()
    placed: list[tuple[NodeInfo, PodInfo]] = []
    for k, (add, host, pod) in enumerate(steps):
        if add or not placed:
            nodes[host].add_pod(pod)
            placed.append((nodes[host], pod))
        else:
            node, gone = placed.pop(host % len(placed))
            node.remove_pod(gone)
        if snapshot.surely_without_affinity():  # what lets InterPodAffinity skip without counting
            assert not any(n.pods_with_affinity for n in nodes)
        if k % check_every == 0:
            _check(memo, scores, incoming, snapshot)
    _check(memo, scores, incoming, snapshot)


def _check(memo: CountsMemo, scores: ScoresMemo, incoming: list[PodInfo], snapshot: Snapshot) -> None:
    for p in incoming:
        assert memo.counts(p, snapshot, snapshot.node_info_list) == _fresh(p, snapshot)
        for all_pods in (True, False):
            kept = _scored(scores.scores(p, snapshot, all_pods, 1))
            fresh = _fresh_scores(p, snapshot, all_pods)
            assert (kept is None) == (fresh is None)
            assert (kept or {}) == (fresh or {})


def test_the_memo_hands_out_copies_and_stays_off_clones_and_partial_lists() -> None:
    nodes = [NodeInfo(MakeNode().name(f"h{i}").label("kubernetes.io/hostname", f"h{i}").obj()) for i in range(3)]
    snapshot = Snapshot(nodes)
    web = _pod("a", "web", "default", 1, "kubernetes.io/hostname")
    nodes[0].add_pod(_pod("b", "web", "default", 1, "kubernetes.io/hostname"))
    memo = CountsMemo()
    first = memo.counts(web, snapshot, snapshot.node_info_list)
    assert first is not None
    first[0].clear()  # a PreFilter state changing its copy (preemption's AddPod/RemovePod)
    assert memo.counts(web, snapshot, snapshot.node_info_list) == _fresh(web, snapshot)
    assert memo.counts(web, snapshot, snapshot.node_info_list[:2]) is None
    clones = Snapshot([n.clone() for n in nodes])
    assert memo.counts(web, clones, clones.node_info_list) is None


def test_a_snapshot_is_surely_without_affinity_only_while_no_such_pod_came() -> None:
    nodes = [NodeInfo(MakeNode().name(f"h{i}").label("kubernetes.io/hostname", f"h{i}").obj()) for i in range(2)]
    nodes[0].add_pod(_pod("plain", "web", "default", 0, "kubernetes.io/hostname"))
    snapshot = Snapshot(nodes)
    assert snapshot.surely_without_affinity()
    anti = _pod("anti", "web", "default", 1, "kubernetes.io/hostname")
    nodes[1].add_pod(anti)
    assert not snapshot.surely_without_affinity()
    nodes[1].remove_pod(anti)
    assert not snapshot.surely_without_affinity()  # not known without a walk, so not claimed
    assert Snapshot(nodes).surely_without_affinity()
