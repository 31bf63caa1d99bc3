"""Victim ordering, PDB accounting and candidate ranking (upstream TestSelectBestCandidate,
TestPickOneNodeForPreemption, filterPodsWithPDBViolation facts)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.preemption import (
    Victims,
    default_score_funcs,
    earliest_pod_start_time,
    filter_pods_with_pdb_violation,
    importance_key,
    more_important_pod,
    pick_one_node_for_preemption,
    pod_start_time,
)
from tests.unit.preemption.harness import pdb, pod

T1, T2, T3 = "2024-01-01T00:00:01Z", "2024-01-01T00:00:02Z", "2024-01-01T00:00:03Z"


def test_more_important_is_higher_priority_then_earlier_start() -> None:
    assert more_important_pod(pod("a", 10, start=T3), pod("b", 5, start=T1))
    assert more_important_pod(pod("a", 5, start=T1), pod("b", 5, start=T2))
    assert not more_important_pod(pod("a", 5, start=T2), pod("b", 5, start=T1))
    # A pod that has not started counts as starting now, after every recorded start.
    assert more_important_pod(pod("a", 5, start=T3), pod("b", 5))
    ordered = sorted([pod("x", 1, start=T1), pod("y", 5, start=T2), pod("z", 5, start=T1)], key=importance_key)
    assert [p.name for p in ordered] == ["z", "y", "x"]


def test_earliest_start_among_highest_priority_victims() -> None:
    victims = Victims([pod("a", 10, start=T3), pod("b", 10, start=T2), pod("c", 1, start=T1)])
    assert earliest_pod_start_time(victims) == pod_start_time(pod("b", 10, start=T2))
    assert earliest_pod_start_time(Victims([])) is None


def _v(*specs: tuple[int, str | None], violations: int = 0) -> Victims:
    return Victims([pod(f"p{i}", prio, start=start) for i, (prio, start) in enumerate(specs)], violations)


@pytest.mark.parametrize(("nodes", "want"), [
    ({"n1": _v((10, T1), violations=1), "n2": _v((50, T1))}, "n2"),
    ({"n1": _v((50, T1)), "n2": _v((10, T1), (10, T1)), "n3": _v((30, T1))}, "n2"),
    ({"n1": _v((10, T1), (5, T1)), "n2": _v((10, T1), (1, T1)), "n3": _v((10, T1), (3, T1))}, "n2"),
    ({"n1": _v((10, T1), (1, T1), (0, T1)), "n2": _v((10, T1), (1, T1))}, "n2"),
    # Priorities are shifted by 2^31 before summing: two -5 victims cost more than one.
    ({"n1": _v((-5, T1), (-5, T1)), "n2": _v((-5, T1))}, "n2"),
    ({"n1": _v((10, T1), (10, T1)), "n2": _v((10, T1), (10, T1))}, "n1"),
    ({"n1": _v((10, T1)), "n2": _v((10, T3)), "n3": _v((10, T2))}, "n2"),
    ({"n1": _v((10, T2), (10, T3)), "n2": _v((10, T3), (10, T3)), "n3": _v((10, T1), (10, T3))}, "n2"),
    # Only the highest-priority victims' start times count.
    ({"n1": _v((20, T3), (10, T1)), "n2": _v((20, T2), (10, T3))}, "n1"),
], ids=["fewest-pdb-violations", "min-highest-priority", "min-priority-sum", "more-victims-cost-more",
        "adjusted-negative-sum", "tie-first-node", "latest-start-time", "latest-start-all-pods",
        "start-time-of-highest-priority"])
def test_pick_one_node(nodes: dict[str, Victims], want: str) -> None:
    assert pick_one_node_for_preemption(nodes) == want


def test_pick_one_node_of_none() -> None:
    assert pick_one_node_for_preemption({}) == ""


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.lists(st.tuples(st.sampled_from([-5, 0, 1, 10]), st.sampled_from([T1, T2, T3, None])),
                                   min_size=1, max_size=4),
                          st.integers(0, 2)), min_size=1, max_size=8))
def test_ranked_pick_is_the_criterion_by_criterion_pick(specs: list) -> None:
    """The default pick compares each node's rank tuple; it must choose the node that applying
    the criteria one after another (upstream's loop) chooses."""
    nodes = {f"n{i}": _v(*victims, violations=violations) for i, (victims, violations) in enumerate(specs)}
    assert pick_one_node_for_preemption(nodes) == pick_one_node_for_preemption(nodes, default_score_funcs(nodes))


def test_custom_score_funcs_replace_the_defaults() -> None:
    nodes = {"n1": _v((1, T1)), "n2": _v((99, T1))}
    assert pick_one_node_for_preemption(nodes, [lambda n: nodes[n].pods[0].priority]) == "n2"


def _split(pods: list, pdbs: list) -> tuple[list[str], list[str]]:
    violating, non_violating = filter_pods_with_pdb_violation(pods, pdbs)
    return [p.name for p in violating], [p.name for p in non_violating]


def test_pdb_budget_decrements_per_matching_pod() -> None:
    pods = [pod(n, 1, labels={"app": "foo"}) for n in ("p1", "p2", "p3")]
    assert _split(pods, [pdb("b", {"app": "foo"}, allowed=1)]) == (["p2", "p3"], ["p1"])


def test_pdb_disrupted_pods_neither_decrement_nor_violate() -> None:
    pods = [pod(n, 1, labels={"app": "foo"}) for n in ("p1", "p2")]
    assert _split(pods, [pdb("b", {"app": "foo"}, allowed=0, disrupted=["p1"])]) == (["p2"], ["p1"])
    assert _split(pods, [pdb("b", {"app": "foo"}, allowed=1, disrupted=["p1"])]) == ([], ["p1", "p2"])


@pytest.mark.parametrize("budget", [
    pdb("other-ns", {"app": "foo"}, allowed=0, namespace="other"),
    pdb("nil-selector", None, allowed=0),
    pdb("empty-selector", {}, allowed=0),
    pdb("no-match", {"app": "bar"}, allowed=0),
], ids=lambda b: b.metadata.name)
def test_pdbs_that_do_not_cover_the_pod(budget: object) -> None:
    assert _split([pod("p1", 1, labels={"app": "foo"})], [budget]) == ([], ["p1"])


def test_unlabelled_pod_matches_no_pdb_and_two_pdbs_are_both_charged() -> None:
    pods = [pod("bare", 1), pod("p1", 1, labels={"app": "foo", "tier": "x"})]
    budgets = [pdb("a", {"app": "foo"}, allowed=1), pdb("b", {"tier": "x"}, allowed=0)]
    assert _split(pods, budgets) == (["p1"], ["bare"])
