"""The nominator: per-node nominated pods in insertion order, one nomination per pod."""

from __future__ import annotations

import msgspec
import numpy as np

from shared.framework.pod_info import PodInfo
from shared.indexes.nominated_positions import NominatedPositions
from shared.queue import FakeClock, Nominator, SchedulingQueue
from shared.queue.nominator import LOG_KEEP
from tests.builders import MakePod

from .support import pod


def names(pods: list[PodInfo]) -> list[str]:
    return [p.name for p in pods]


def test_pods_per_node_in_insertion_order() -> None:
    n = Nominator()
    for name, node in [("c", "n1"), ("a", "n1"), ("b", "n2"), ("d", "n1")]:
        n.add_nominated_pod(pod(name), node)
    assert names(n.nominated_pods_for_node("n1")) == ["c", "a", "d"]
    assert names(n.nominated_pods_for_node("n2")) == ["b"]
    assert n.nominated_pods_for_node("n3") == [] and len(n) == 4


def test_renominating_moves_the_pod_without_duplicates() -> None:
    n = Nominator()
    p = pod("p")
    n.add_nominated_pod(p, "n1")
    n.add_nominated_pod(p, "n1")
    assert names(n.nominated_pods_for_node("n1")) == ["p"]
    n.add_nominated_pod(p, "n2")
    assert n.nominated_pods_for_node("n1") == [] and n.nominated_node_of(p.uid) == "n2"


def test_without_node_name_the_status_decides() -> None:
    n = Nominator()
    n.add_nominated_pod(MakePod().name("a").nominated_node("n1").info())
    n.add_nominated_pod(MakePod().name("b").info())
    assert names(n.nominated_pods_for_node("n1")) == ["a"]
    assert n.nominated_node_of("default/b") is None


def test_bound_pod_is_not_nominated() -> None:
    n = Nominator()
    n.add_nominated_pod(MakePod().name("a").node("n2").info(), "n1")
    assert n.nominated_node_of("default/a") is None


def test_delete_is_idempotent() -> None:
    n = Nominator()
    p = pod("p")
    n.add_nominated_pod(p, "n1")
    n.delete_nominated_pod_if_exists(p)
    n.delete_nominated_pod_if_exists(p)
    assert n.nominated_pods_for_node("n1") == [] and len(n) == 0


def test_update_keeps_an_in_memory_nomination_when_statuses_say_nothing() -> None:
    n = Nominator()
    old = pod("p")
    n.add_nominated_pod(old, "n1")
    new = MakePod().name("p").label("x", "y").info()
    n.update_nominated_pod(old, new)
    assert n.nominated_pods_for_node("n1") == [new]


def test_update_follows_the_new_status() -> None:
    n = Nominator()
    old = MakePod().name("p").nominated_node("n1").info()
    n.add_nominated_pod(old)
    moved = MakePod().name("p").nominated_node("n2").info()
    n.update_nominated_pod(old, moved)
    assert n.nominated_node_of(old.uid) == "n2"
    cleared = PodInfo(msgspec.structs.replace(moved.pod, status=msgspec.structs.replace(
        moved.pod.status, nominated_node_name="")))
    n.update_nominated_pod(moved, cleared)
    assert n.nominated_node_of(old.uid) is None


def test_queue_nominates_from_status_on_add_and_forgets_on_delete(clock: FakeClock) -> None:
    q = SchedulingQueue(clock=clock)
    info = MakePod().name("p").nominated_node("n1").info()
    q.add(info)
    assert q.nominated_pods_for_node("n1") == [info]
    q.delete(info)
    assert q.nominated_pods_for_node("n1") == []


def test_queue_update_refreshes_the_nominated_pod_info(clock: FakeClock) -> None:
    q = SchedulingQueue(clock=clock)
    old = MakePod().name("p").nominated_node("n1").info()
    q.add(old)
    new = MakePod().name("p").nominated_node("n1").priority(5).info()
    q.update(old, new)
    assert q.nominator.nominated_pods_for_node("n1") == [new]


def test_a_node_stamp_changes_with_its_nominated_pods_and_only_then() -> None:
    n = Nominator()
    assert n.stamps.get("n1") is None
    a, b = pod("a"), pod("b")
    n.add_nominated_pod(a, "n1")
    first = n.stamps["n1"]
    n.add_nominated_pod(b, "n2")
    assert n.stamps["n1"] == first  # another node's change leaves n1's stamp
    n.add_nominated_pod(b, "n1")
    second = n.stamps["n1"]
    assert second != first and n.stamps["n2"] not in (first, second)
    n.update_nominated_pod(a, pod("a"))  # a newer PodInfo is a different set of pods
    assert n.stamps["n1"] not in (first, second)
    # Stamps never repeat across nominators: another one's pods are never mistaken for these.
    other = Nominator()
    other.add_nominated_pod(a, "n1")
    assert other.stamps["n1"] not in (first, second, n.stamps["n1"])


def test_changes_are_logged_by_node_and_followed_as_position_arrays() -> None:
    n = Nominator()
    follower = NominatedPositions({"n0": 0, "n1": 1, "n2": 2}, 3)
    follower.follow(n)
    assert follower.positions().tolist() == []
    start = n.version
    a, b = pod("a"), pod("b")
    n.add_nominated_pod(a, "n1")
    n.add_nominated_pod(b, "n2")
    assert n.changed_since(start) == ["n1", "n2"]
    follower.follow(n)
    assert follower.positions().tolist() == [1, 2]
    assert follower.stamp[1] == n.stamps["n1"] and follower.stamp[0] == 0
    n.add_nominated_pod(a, "n2")  # moves: n1 loses its only pod, n2 gains one
    n.add_nominated_pod(pod("c"), "elsewhere")  # a node the snapshot does not have
    follower.follow(n)
    assert follower.positions().tolist() == [2]
    assert follower.stamp[2] == n.stamps["n2"] and follower.stamp[1] == n.stamps["n1"]
    assert follower.positions(np.array([True, True, False])).tolist() == []


def test_a_follower_left_behind_or_switched_reads_every_nomination_again() -> None:
    n = Nominator()
    follower = NominatedPositions({"n0": 0, "n1": 1}, 2)
    follower.follow(n)
    start = n.version
    p = pod("p")
    for i in range(2 * LOG_KEEP + 1):
        n.add_nominated_pod(p, f"n{i % 2}")
    assert n.changed_since(start) is None
    follower.follow(n)
    assert follower.positions().tolist() == [0] and follower.stamp[0] == n.stamps["n0"]
    other = Nominator()
    other.add_nominated_pod(pod("q"), "n1")
    follower.follow(other)
    assert follower.positions().tolist() == [1] and follower.stamp[0] == 0
