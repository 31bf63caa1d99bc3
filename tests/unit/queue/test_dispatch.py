"""Whole batches go to the worker with the fewest in hand; workers are learned from their answers."""

from __future__ import annotations

import pytest

from services.queue.dispatch import PRIME_AFTER_S, SPREAD, Dispatcher
from shared.protocol.resting import KEEP_AWAKE_S


def _owners(assignment: list[list[int]]) -> Dispatcher:
    d = Dispatcher(8)
    for owned in assignment:
        d.owned(owned)
    return d


def test_before_any_answer_consecutive_batches_spread_over_range_assigned_workers() -> None:
    d = Dispatcher(8)
    assert d.workers() == 1
    sent = [d.choose(f"b{i}") for i in range(4)]
    for i in range(4):
        d.answered(f"b{i}")
    assert sent == [0, 4, 2, 6]  # two workers (0-3, 4-7): alternate; four: each one once


@pytest.mark.parametrize("assignment", [
    [[0, 1, 2, 3, 4, 5, 6, 7]],
    [[0, 1, 2, 3], [4, 5, 6, 7]],
    [[0, 1, 2], [3, 4, 5], [6, 7]],
    [[k] for k in range(8)],
], ids=["1", "2", "3", "8"])
def test_batches_in_flight_are_spread_one_per_worker(assignment: list[list[int]]) -> None:
    d = _owners(assignment)
    assert d.workers() == len(assignment)
    sent = [d.choose(f"b{i}") for i in range(len(assignment))]
    owner_of = {p: i for i, owned in enumerate(assignment) for p in owned}
    assert sorted(owner_of[p] for p in sent) == list(range(len(assignment)))


@pytest.mark.parametrize("out", [1, 2, 3])
def test_batches_go_to_as_few_workers_as_are_kept_busy(out: int) -> None:
    """A worker sent nothing folds nothing: with `out` batches at the workers at a time, the same
    `out` workers of eight get them all."""
    d = _owners([[k] for k in range(8)])
    in_hand = [d.choose(f"b{i}") for i in range(out)]
    used = set(in_hand)
    for i in range(out, 40):
        d.answered(f"b{i - out}")
        used.add(d.choose(f"b{i}"))
    assert len(used) == out


def test_unnamed_partitions_count_as_one_more_worker_until_an_answer_names_them() -> None:
    d = _owners([[0, 1, 2, 3]])
    assert d.workers() == 2
    busy = d.choose("a")
    other = d.choose("b")
    assert {busy // 4, other // 4} == {0, 1}  # the second goes to the other destination
    d.owned([4, 5, 6, 7])
    assert d.workers() == 2


def test_a_silent_partition_is_avoided_and_forgotten() -> None:
    d = _owners([[0, 1, 2, 3], [4, 5, 6, 7]])
    first = d.choose("a")
    d.choose("b")  # the other worker has a batch in hand too
    again = d.choose("a", avoid=first)
    d.forget(first)
    assert again // 4 != first // 4  # not the silent worker's other partitions either
    d.answered("b")
    d.answered("a")
    assert d.workers() == 3  # the forgotten partition is unnamed again until an answer names it


def test_partitions_no_answer_named_share_one_destinations_load() -> None:
    """With more batches out than destinations known (a fixed BERTH_QUEUE_PIPELINE), the worker
    that answered and the partitions none named yet take turns, not one batch per partition."""
    d = _owners([[0, 1, 2, 3]])
    sent = [d.choose(f"b{i}") for i in range(4)]
    assert sorted(p // 4 for p in sent) == [0, 0, 1, 1]
    assert len({p for p in sent if p >= 4}) == 2  # spread over the unnamed partitions all the same


def test_a_silent_workers_partitions_are_tried_last_until_an_answer_names_them() -> None:
    d = _owners([[0, 1, 2, 3], [4, 5, 6, 7]])
    first = d.choose("a")
    assert first == 0
    again = d.choose("a", avoid=first)
    d.forget(first)
    d.answered("a")
    assert again // 4 == 1
    later = [d.choose(f"b{i}") for i in range(3)]  # 0 is first in order and now idle
    assert all(p // 4 == 1 for p in later)
    for i in range(3):
        d.answered(f"b{i}")
    d.owned([0, 1, 2, 3])  # the worker (or its partitions' new owner) answers again
    assert d.choose("c") == 0


def test_a_rebalance_is_learned_from_the_next_answers() -> None:
    d = _owners([[0, 1], [2, 3], [4, 5], [6, 7]])
    assert d.workers() == 4
    d.owned([0, 1, 2, 3])  # the second worker left; the first took its partitions
    d.owned([4, 5, 6, 7])
    assert d.workers() == 2


@pytest.mark.parametrize("most", [1, 2, 3])
def test_at_most_most_destinations_get_batches_however_many_are_out(most: int) -> None:
    """Where every process shares a few cores: the batches out wait at the first `most` workers
    in the fixed order rather than keep more of them busy."""
    d = Dispatcher(8, most=most)
    for k in range(8):
        d.owned([k])
    in_hand = [d.choose(f"b{i}") for i in range(6)]
    assert set(in_hand) == set(SPREAD[:most])
    loads = [in_hand.count(p) for p in set(in_hand)]
    assert max(loads) - min(loads) <= 1  # the fewest in hand among them, as before


def test_with_most_one_before_any_answer_the_batches_go_to_unnamed_partitions() -> None:
    """Unnamed partitions are one destination: a worker is found by sending it work."""
    d = Dispatcher(8, most=1)
    sent = [d.choose(f"b{i}") for i in range(2)]
    assert sent == [0, 4]
    d.owned([0, 1, 2, 3])
    d.answered("b0")
    d.answered("b1")
    assert [d.choose(f"c{i}") for i in range(3)] == [0, 0, 0]


def test_with_most_one_a_silent_worker_is_passed_over_for_the_next() -> None:
    d = Dispatcher(8, most=1)
    d.owned([0, 1, 2, 3])
    d.owned([4, 5, 6, 7])
    first = d.choose("a")
    assert first == 0
    again = d.choose("a", avoid=first)
    d.forget(first)
    assert again // 4 == 1
    d.answered("a")
    assert d.choose("b") // 4 == 1  # the silent worker's partitions are suspect until named again


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _primed(assignment: list[list[int]], most: int = 0) -> tuple[Dispatcher, _Clock]:
    clock = _Clock()
    d = Dispatcher(8, most=most, clock=clock)
    for owned in assignment:
        d.owned(owned)
    return d, clock


def test_a_batch_primes_every_other_idle_worker_once() -> None:
    d, clock = _primed([[0, 1], [2, 3], [4, 5], [6, 7]])
    sent = d.choose("b0")
    primed = d.primes()
    assert sorted(p // 2 for p in primed) == sorted({0, 1, 2, 3} - {sent // 2})  # one partition per worker
    assert d.primes() == []  # primed just now
    clock.now += PRIME_AFTER_S
    assert sorted(p // 2 for p in d.primes()) == sorted({0, 1, 2, 3} - {sent // 2})  # b0 still in hand


def test_a_worker_sent_a_batch_lately_is_not_primed() -> None:
    d, clock = _primed([[0, 1, 2, 3], [4, 5, 6, 7]])
    first = d.choose("b0")
    d.answered("b0")
    clock.now += PRIME_AFTER_S / 2
    assert {p // 4 for p in d.primes()} == {1 - first // 4}
    clock.now += PRIME_AFTER_S / 2
    assert {p // 4 for p in d.primes()} == {first // 4}


def test_an_idle_queue_primes_a_worker_only_once_its_longer_wait_ran_out() -> None:
    d, clock = _primed([[0, 1, 2, 3], [4, 5, 6, 7]], most=1)
    assert d.primes(KEEP_AWAKE_S) == [SPREAD[0]]  # never sent anything: at once
    clock.now += PRIME_AFTER_S
    assert d.primes(KEEP_AWAKE_S) == []
    clock.now += KEEP_AWAKE_S - PRIME_AFTER_S
    assert d.primes(KEEP_AWAKE_S) == [SPREAD[0]]


def test_before_any_answer_each_partition_is_primed_its_owner_unknown() -> None:
    d, _ = _primed([])
    sent = d.choose("b0")
    assert sorted(d.primes()) == sorted(set(range(8)) - {sent})


@pytest.mark.parametrize("most", [1, 2])
def test_only_the_destinations_batches_may_go_to_are_primed(most: int) -> None:
    d, _ = _primed([[k] for k in range(8)], most=most)
    assert d.choose("b0") == SPREAD[0]
    assert d.primes() == list(SPREAD[1:most])


def test_a_suspect_worker_is_not_primed() -> None:
    d, _ = _primed([[0, 1, 2, 3], [4, 5, 6, 7]])
    d.forget(4)
    assert d.choose("b0") // 4 == 0
    assert d.primes() == []
