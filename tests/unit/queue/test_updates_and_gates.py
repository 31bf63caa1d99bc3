"""Updates and deletions in every sub-queue, pods updated while in flight, and gated pods."""

from __future__ import annotations

import msgspec
import pytest

from shared.framework import events
from shared.framework.events import ActionType, ClusterEvent
from shared.framework.pod_info import PodInfo
from shared.queue import FakeClock, SchedulingQueue
from tests.builders import MakePod

from .support import FIT, GATES, Gates, fail, pod, where

GATES_ELIMINATED = ClusterEvent(events.UNSCHEDULED_POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)


def with_label(info: PodInfo, value: str) -> PodInfo:
    meta = msgspec.structs.replace(info.pod.metadata, labels={"v": value})
    return PodInfo(msgspec.structs.replace(info.pod, metadata=meta))


def with_nomination(info: PodInfo, node: str) -> PodInfo:
    status = msgspec.structs.replace(info.pod.status, nominated_node_name=node)
    return PodInfo(msgspec.structs.replace(info.pod, status=status))


def place(q: SchedulingQueue, clock: FakeClock, where_to: str) -> PodInfo:
    """Put pod "p" in activeQ, backoffQ or unschedulablePods."""
    info = pod("p")
    q.add(info)
    if where_to == "backoff":
        qpi = q.pop()
        assert qpi is not None
        q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)
    elif where_to == "unschedulable":
        fail(q, "p", FIT)
    assert where(q, "p") == where_to
    return info


@pytest.mark.parametrize(("start", "change", "advance", "want"), [
    ("active", "label", 0, "active"),
    ("backoff", "label", 0, "backoff"),
    ("unschedulable", "status", 5, "unschedulable"),  # status-only changes cannot help
    ("unschedulable", "label", 5, "active"),
    ("unschedulable", "label", 0.5, "backoff"),  # still backing off
], ids=["active", "backoff", "unschedulable-status-only", "unschedulable-spec", "unschedulable-backing-off"])
def test_update_in_each_sub_queue(queue: SchedulingQueue, clock: FakeClock, start: str, change: str,
                                  advance: float, want: str) -> None:
    old = place(queue, clock, start)
    clock.advance(advance)
    new = with_label(old, "2") if change == "label" else with_nomination(old, "n1")
    queue.update(old, new)
    assert where(queue, "p") == want
    entry = queue.get("default/p")
    assert entry is not None and entry.pod_info is new


def test_update_of_unknown_pod_adds_it(queue: SchedulingQueue) -> None:
    queue.update(None, pod("new"))
    assert where(queue, "new") == "active"


def test_priority_update_in_active_q_reorders(queue: SchedulingQueue, clock: FakeClock) -> None:
    queue.add(pod("a", 1))
    clock.advance(1)
    b = pod("b", 1)
    queue.add(b)
    queue.update(b, MakePod().name("b").priority(100).info())
    first = queue.pop()
    assert first is not None and first.pod_info.name == "b"


@pytest.mark.parametrize("start", ["active", "backoff", "unschedulable"])
def test_delete_from_each_sub_queue(queue: SchedulingQueue, clock: FakeClock, start: str) -> None:
    info = place(queue, clock, start)
    queue.nominator.add_nominated_pod(info, "n1")
    queue.delete(info)
    assert where(queue, "p") == "none" and len(queue) == 0
    assert queue.nominator.nominated_node_of(info.uid) is None


def test_update_while_in_flight_is_applied_when_the_pod_comes_back(queue: SchedulingQueue) -> None:
    old = pod("p")
    queue.add(old)
    qpi = queue.pop()
    assert qpi is not None
    new = with_label(old, "2")
    queue.update(old, new)
    assert len(queue) == 0, "no second copy while the pod is being scheduled"
    qpi.unschedulable_plugins = {FIT}
    queue.add_unschedulable_if_not_present(qpi, queue.scheduling_cycle)
    assert where(queue, "p") == "backoff" and qpi.pod_info is new


def test_status_update_while_in_flight_keeps_the_normal_rule(queue: SchedulingQueue) -> None:
    old = pod("p")
    queue.add(old)
    qpi = queue.pop()
    assert qpi is not None
    queue.update(old, with_nomination(old, "n1"))
    qpi.unschedulable_plugins = {FIT}
    queue.add_unschedulable_if_not_present(qpi, queue.scheduling_cycle)
    assert where(queue, "p") == "unschedulable"
    assert queue.nominator.nominated_node_of(old.uid) == "n1"


def test_pod_deleted_while_in_flight_is_not_requeued(queue: SchedulingQueue) -> None:
    info = pod("p")
    queue.add(info)
    qpi = queue.pop()
    assert qpi is not None
    queue.delete(info)
    qpi.unschedulable_plugins = {FIT}
    assert not queue.add_unschedulable_if_not_present(qpi, queue.scheduling_cycle)
    assert len(queue) == 0


def gated(name: str = "g") -> PodInfo:
    return MakePod().name(name).scheduling_gates("example.com/wait").info()


def test_gated_pod_waits_and_is_never_popped(queue: SchedulingQueue, clock: FakeClock) -> None:
    assert not queue.add(gated())
    assert where(queue, "g") == "gated"
    entry = queue.get("default/g")
    assert entry is not None and entry.gated and entry.gating_plugin == GATES
    assert entry.unschedulable_plugins == {GATES} and entry.initial_attempt_timestamp is None
    assert queue.pop() is None
    clock.advance(1000)
    queue.flush_unschedulable_pods_left_over()
    queue.flush_backoff_q_completed()
    queue.move_all_to_active_or_backoff_queue(events.NODE_ADD)
    queue.move_all_to_active_or_backoff_queue(GATES_ELIMINATED)  # the gates plugin's event, gates remain
    assert where(queue, "g") == "gated" and queue.pop() is None
    assert not queue.can_make_progress() and queue.next_unschedulable_timeout() is None


def test_removing_the_gates_activates_the_pod(queue: SchedulingQueue, clock: FakeClock) -> None:
    old = gated()
    queue.add(old)
    clock.advance(3)
    new = MakePod().name("g").info()
    queue.update(old, new)
    assert where(queue, "g") == "active"
    qpi = queue.pop()
    assert qpi is not None and qpi.attempts == 1 and not qpi.gated
    assert qpi.initial_attempt_timestamp == clock.now() and qpi.timestamp == 1000.0


def test_changing_but_keeping_gates_stays_gated(queue: SchedulingQueue) -> None:
    old = gated()
    queue.add(old)
    queue.update(old, MakePod().name("g").label("x", "y").scheduling_gates("example.com/wait").info())
    assert where(queue, "g") == "gated"


def test_activate_does_not_open_a_gate(queue: SchedulingQueue) -> None:
    queue.add(gated())
    queue.activate([gated()])
    assert where(queue, "g") == "gated"


def test_pre_enqueue_plugins_per_profile(clock: FakeClock) -> None:
    q = SchedulingQueue(clock=clock, pre_enqueue_plugins={"gated-profile": [Gates()]})
    q.add(MakePod().name("a").scheduler_name("gated-profile").scheduling_gates("x").info())
    q.add(MakePod().name("b").scheduler_name("other").scheduling_gates("x").info())
    assert (where(q, "a"), where(q, "b")) == ("gated", "active")
