"""`berth explain` says why the picked node among those scored: the only one at the highest
total, one of several tied there (the attempt's seed chose, as upstream's selectHost samples the
tied nodes), or below others, some of which pods decided before it in its batch took."""

from __future__ import annotations

from shared.replay.explain import NodeExplanation, pick_reason


def _node(name: str, total: int | None, picked: bool = False) -> NodeExplanation:
    return NodeExplanation(node=name, walked=total is not None, status="fits", filters=[], total=total,
                           picked=picked)


def test_the_only_node_at_the_highest_total() -> None:
    nodes = [_node("a", 90), _node("b", 120, picked=True), _node("c", None)]
    assert pick_reason(nodes, set()) == "b: the only node with the highest total (120)"


def test_one_of_several_tied_at_the_highest_total() -> None:
    nodes = [_node("a", 120), _node("b", 120, picked=True), _node("c", 120), _node("d", 90)]
    assert pick_reason(nodes, set()) == (
        "b: one of 3 nodes tied at the highest total (120); the attempt's seed chose among them")


def test_below_nodes_that_pods_before_it_in_its_batch_took() -> None:
    nodes = [_node("a", 130), _node("b", 125), _node("c", 120, picked=True)]
    assert pick_reason(nodes, {"a", "z"}) == (
        "c (total 120): 2 node(s) scored higher, 1 of them taken by pods decided before it in its batch")


def test_nothing_picked_or_scored_says_nothing() -> None:
    assert pick_reason([_node("a", 120)], set()) == ""
    assert pick_reason([_node("a", None, picked=True)], set()) == ""
