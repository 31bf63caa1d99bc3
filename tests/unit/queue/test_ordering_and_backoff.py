"""activeQ order, backoff durations and the two flushes, driven by a fake clock."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.framework import events
from shared.queue import FakeClock, MonotonicClock, SchedulingQueue
from shared.queue.heap import KeyedHeap
from tests.builders import MakePod

from .support import EVENT_MAP, FIT, fail, pod, where


def test_pop_order_is_priority_then_queue_time(queue: SchedulingQueue, clock: FakeClock) -> None:
    for name, prio in [("low", 1), ("mid-early", 5), ("high", 10), ("mid-late", 5), ("low2", 1)]:
        queue.add(pod(name, prio))
        clock.advance(0.001)
    names = []
    while (q := queue.pop()) is not None:
        names.append(q.pod_info.name)
    assert names == ["high", "mid-early", "mid-late", "low", "low2"]


def test_pop_on_empty_queue_returns_none_and_keeps_cycle(queue: SchedulingQueue) -> None:
    assert queue.pop() is None
    assert queue.scheduling_cycle == 0


def test_pop_counts_attempts_and_cycles_and_clears_rejectors(queue: SchedulingQueue, clock: FakeClock) -> None:
    queue.add(pod("a"))
    first = queue.pop()
    assert first is not None and first.attempts == 1 and queue.scheduling_cycle == 1
    assert first.initial_attempt_timestamp == 1000.0
    first.unschedulable_plugins = {FIT}
    queue.add_unschedulable_if_not_present(first, queue.scheduling_cycle)
    queue.activate([first.pod_info])
    again = queue.pop()
    assert again is first and again.attempts == 2 and again.unschedulable_plugins == set()
    assert queue.scheduling_cycle == 2 and again.initial_attempt_timestamp == 1000.0


def test_custom_less_is_used(clock: FakeClock) -> None:
    q = SchedulingQueue(clock=clock, less=lambda a, b: a.pod_info.name < b.pod_info.name)
    for name in ["c", "a", "b"]:
        q.add(pod(name))
    assert [q.pop().pod_info.name for _ in range(3)] == ["a", "b", "c"]  # type: ignore[union-attr]  # three queued


def test_equal_keys_pop_in_go_container_heap_order() -> None:
    # With every key equal, Go's container/heap yields a, e, d, c, b for pushes a..e.
    heap: KeyedHeap[str] = KeyedHeap(lambda s: s, lambda x, y: False)
    for item in "abcde":
        heap.add_or_update(item)
    assert [heap.pop() for _ in range(5)] == list("aedcb")


class _SwapHeap:
    """container/heap as written in Go (a swap per level), the reference for KeyedHeap."""

    def __init__(self, less: Callable[[str, str], bool]) -> None:
        self.items: list[str] = []
        self.less = less

    def _up(self, j: int) -> None:
        while j > 0 and self.less(self.items[j], self.items[(j - 1) // 2]):
            p = (j - 1) // 2
            self.items[p], self.items[j] = self.items[j], self.items[p]
            j = p

    def _down(self, i0: int, n: int) -> bool:
        i = i0
        while 2 * i + 1 < n:
            j = 2 * i + 1
            if j + 1 < n and self.less(self.items[j + 1], self.items[j]):
                j += 1
            if not self.less(self.items[j], self.items[i]):
                break
            self.items[i], self.items[j] = self.items[j], self.items[i]
            i = j
        return i > i0

    def push(self, x: str) -> None:
        self.items.append(x)
        self._up(len(self.items) - 1)

    def pop(self) -> str:
        n = len(self.items) - 1
        self.items[0], self.items[n] = self.items[n], self.items[0]
        self._down(0, n)
        return self.items.pop()

    def remove(self, x: str) -> None:
        i, n = self.items.index(x), len(self.items) - 1
        if n != i:
            self.items[i], self.items[n] = self.items[n], self.items[i]
            if not self._down(i, n):
                self._up(i)
        self.items.pop()

    def fix(self, x: str) -> None:
        i = self.items.index(x)
        if not self._down(i, len(self.items)):
            self._up(i)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["push", "pop", "delete", "update"]), st.integers(0, 11),
                          st.integers(0, 2)), max_size=60), st.booleans())
def test_heap_keeps_go_container_heap_order_under_any_operations(ops: list[tuple[str, int, int]],
                                                                 ranked: bool) -> None:
    """Few distinct priorities, so most comparisons tie and only the sift rules decide; `ranked`:
    the heap compares ranks that order as `less` does instead of calling it."""
    prio: dict[str, int] = {}

    def less(x: str, y: str) -> bool:
        return prio[x] > prio[y]
    heap: KeyedHeap[str] = KeyedHeap(lambda s: s, less, (lambda s: -prio[s]) if ranked else None)
    ref = _SwapHeap(less)
    for op, k, p in ops:
        item = f"i{k}"
        if op == "push" and not heap.has_key(item):
            prio[item] = p
            heap.add_or_update(item)
            ref.push(item)
        elif op == "pop" and len(heap):
            assert heap.pop() == ref.pop()
        elif op == "delete" and heap.has_key(item):
            heap.delete(item)
            ref.remove(item)
        elif op == "update" and heap.has_key(item):
            prio[item] = p
            heap.add_or_update(item)
            ref.fix(item)
        assert list(heap) == ref.items


def test_heap_delete_and_update_keep_order() -> None:
    prio = {"a": 5, "b": 3, "c": 9, "d": 1}
    heap: KeyedHeap[str] = KeyedHeap(lambda s: s, lambda x, y: prio[x] > prio[y])
    for item in prio:
        heap.add_or_update(item)
    assert heap.delete("c") == "c" and heap.delete("zz") is None
    prio["d"] = 7
    heap.add_or_update("d")
    assert [heap.pop() for _ in range(3)] == ["d", "a", "b"] and heap.pop() is None


@pytest.mark.parametrize(("initial", "maximum", "want"), [
    (1, 10, [1, 2, 4, 8, 10, 10, 10]),
    (2, 5, [2, 4, 5, 5]),
    (1, 1, [1, 1, 1]),
], ids=["defaults", "initial-2-max-5", "max-equals-initial"])
def test_backoff_flow(clock: FakeClock, initial: float, maximum: float, want: list[float]) -> None:
    # Upstream TestBackOffFlow: each failed attempt doubles the backoff up to the maximum.
    q = SchedulingQueue(clock=clock, pod_initial_backoff_seconds=initial, pod_max_backoff_seconds=maximum,
                        cluster_event_map=EVENT_MAP)
    q.add(pod("test-pod"))
    for attempt, backoff in enumerate(want, start=1):
        failed_at = clock.now()
        qpi = q.pop()
        assert qpi is not None and qpi.attempts == attempt
        qpi.unschedulable_plugins = {FIT}
        q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
        q.move_all_to_active_or_backoff_queue(events.UNSCHEDULABLE_TIMEOUT)
        assert where(q, "test-pod") == "backoff"
        assert q.next_backoff_expiry() == failed_at + backoff
        clock.advance(0.001)
        q.flush_backoff_q_completed()
        assert where(q, "test-pod") == "backoff", "an early flush must leave it backing off"
        clock.advance(backoff)
        q.flush_backoff_q_completed()
        assert where(q, "test-pod") == "active"


def test_backoff_flush_moves_only_expired_pods_in_expiry_order(queue: SchedulingQueue, clock: FakeClock) -> None:
    queue.add(pod("a"))
    queue.add(pod("b"))
    for name in ("a", "b"):
        qpi = queue.pop()
        assert qpi is not None and qpi.pod_info.name == name
        qpi.attempts = 3 if name == "a" else 1  # a backs off 4 s, b 1 s
        queue.add_unschedulable_if_not_present(qpi, queue.scheduling_cycle)  # no rejectors: error backoff
    assert queue.next_backoff_expiry() == 1001.0
    clock.set(1001.0)
    queue.flush_backoff_q_completed()
    assert (where(queue, "a"), where(queue, "b")) == ("backoff", "active")
    assert queue.next_backoff_expiry() == 1004.0
    clock.set(1004.0)
    queue.flush_backoff_q_completed()
    assert where(queue, "a") == "active" and queue.next_backoff_expiry() is None


@pytest.mark.parametrize(("limit", "wait", "want"), [
    (300, 300, "unschedulable"),  # not strictly longer than the limit yet
    (300, 300.001, "active"),
    (60, 60.5, "active"),
    (60, 59, "unschedulable"),
], ids=["at-limit", "past-default-limit", "past-custom-limit", "before-custom-limit"])
def test_flush_unschedulable_pods_left_over(clock: FakeClock, limit: float, wait: float, want: str) -> None:
    q = SchedulingQueue(clock=clock, pod_max_in_unschedulable_pods_duration=limit, cluster_event_map=EVENT_MAP)
    q.add(pod("p"))
    fail(q, "p", FIT)
    assert q.next_unschedulable_timeout() == 1000.0 + limit
    clock.advance(wait)
    assert q.has_unschedulable_older_than(limit) == (want == "active")
    q.flush_unschedulable_pods_left_over()
    assert where(q, "p") == want


def test_leftover_flush_sends_pods_still_backing_off_to_backoff_q(clock: FakeClock) -> None:
    q = SchedulingQueue(clock=clock, pod_max_in_unschedulable_pods_duration=5, cluster_event_map=EVENT_MAP)
    q.add(pod("p"))
    for _ in range(4):
        fail(q, "p", FIT)
        q.activate([pod("p")])
    fail(q, "p", FIT)  # fifth attempt: 10 s of backoff, longer than the 5 s limit
    clock.advance(6)
    q.flush_unschedulable_pods_left_over()
    assert where(q, "p") == "backoff"
    assert q.next_backoff_expiry() == pytest.approx(1000.0 + 10)


def test_high_priority_pod_first_after_leftover_flush(queue: SchedulingQueue, clock: FakeClock) -> None:
    # Upstream TestHighPriorityFlushUnschedulablePodsLeftover.
    queue.add(pod("high", 1000))
    queue.add(pod("mid", 100))
    fail(queue, "high", FIT)
    fail(queue, "mid", FIT)
    clock.advance(301)
    queue.flush_unschedulable_pods_left_over()
    assert [queue.pop().pod_info.name for _ in range(2)] == ["high", "mid"]  # type: ignore[union-attr]  # two queued


def test_pending_pods_counts(queue: SchedulingQueue) -> None:
    queue.add(pod("active"))
    queue.add(pod("unsched", 10))
    queue.add(pod("errored", 5))
    fail(queue, "unsched", FIT)
    qpi = queue.pop()
    assert qpi is not None
    queue.add_unschedulable_if_not_present(qpi, queue.scheduling_cycle)
    queue.add(MakePod().name("gated").scheduling_gates("g").info())
    pending = queue.pending_pods()
    assert pending.counts() == {"active": 1, "backoff": 1, "unschedulable": 1, "gated": 1}
    assert pending.summary() == "activeQ:1; backoffQ:1; unschedulablePods:2"
    assert len(queue) == 4 and len(pending.pods()) == 4
    assert queue.can_make_progress()


def test_fake_clock_moves_only_forward() -> None:
    clock = FakeClock(5)
    clock.advance(1.5)
    clock.set(10)
    assert clock.now() == 10
    with pytest.raises(ValueError):
        clock.advance(-1)
    with pytest.raises(ValueError):
        clock.set(9)


def test_monotonic_clock_never_goes_back() -> None:
    clock = MonotonicClock()
    assert clock.now() <= clock.now()
