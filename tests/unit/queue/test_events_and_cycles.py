"""Where a failed pod goes (the moveRequestCycle rule) and which cluster events move it."""

from __future__ import annotations

import pytest

from shared.framework import events
from shared.framework.events import ActionType, ClusterEvent
from shared.queue import FakeClock, SchedulingQueue
from tests.builders import MakePod

from .support import FIT, SILENT, TAINTS, fail, pod, where

NODE_ADD = events.NODE_ADD
NODE_LABEL = ClusterEvent(events.NODE, ActionType.UPDATE_NODE_LABEL, "NodeLabelChange")
NODE_TAINT = ClusterEvent(events.NODE, ActionType.UPDATE_NODE_TAINT, "NodeTaintChange")


def test_failure_without_move_request_parks_the_pod(queue: SchedulingQueue) -> None:
    queue.add(pod("p"))
    fail(queue, "p", FIT)
    assert where(queue, "p") == "unschedulable"


def test_move_request_during_the_cycle_sends_the_pod_to_backoff(queue: SchedulingQueue) -> None:
    queue.add(pod("p"))
    qpi = queue.pop()
    assert qpi is not None
    cycle = queue.scheduling_cycle
    queue.move_all_to_active_or_backoff_queue(NODE_ADD)  # the cluster changed while p was tried
    assert queue.move_request_cycle == cycle
    qpi.unschedulable_plugins = {FIT}
    queue.add_unschedulable_if_not_present(qpi, cycle)
    assert where(queue, "p") == "backoff"


def test_move_request_before_the_cycle_does_not_count(queue: SchedulingQueue) -> None:
    queue.add(pod("p"))
    queue.move_all_to_active_or_backoff_queue(NODE_ADD)  # cycle 0
    fail(queue, "p", FIT)  # cycle 1
    assert where(queue, "p") == "unschedulable"


def test_event_nobody_registered_is_not_a_move_request(queue: SchedulingQueue) -> None:
    queue.add(pod("p"))
    qpi = queue.pop()
    assert qpi is not None
    queue.move_all_to_active_or_backoff_queue(NODE_LABEL)  # no plugin listens to node labels
    assert queue.move_request_cycle == -1
    qpi.unschedulable_plugins = {FIT}
    queue.add_unschedulable_if_not_present(qpi, queue.scheduling_cycle)
    assert where(queue, "p") == "unschedulable"


def test_error_failure_backs_off(queue: SchedulingQueue, clock: FakeClock) -> None:
    queue.add(pod("p"))
    qpi = queue.pop()
    assert qpi is not None
    assert queue.add_unschedulable_if_not_present(qpi, queue.scheduling_cycle)
    assert where(queue, "p") == "backoff" and queue.next_backoff_expiry() == clock.now() + 1


def test_add_unschedulable_refuses_a_pod_already_queued(queue: SchedulingQueue) -> None:
    queue.add(pod("p"))
    qpi = queue.pop()
    assert qpi is not None
    queue.add(pod("p"))  # a second copy arrived meanwhile
    assert not queue.add_unschedulable_if_not_present(qpi, queue.scheduling_cycle)
    assert where(queue, "p") == "active" and queue.in_flight() == []


@pytest.mark.parametrize(("rejectors", "event", "new_obj", "moves"), [
    ({FIT}, NODE_ADD, None, True),
    ({FIT}, NODE_LABEL, None, False),
    ({TAINTS}, NODE_TAINT, None, True),
    ({TAINTS}, events.ASSIGNED_POD_DELETE, None, False),
    ({FIT}, events.ASSIGNED_POD_DELETE, None, True),  # Pod/Delete covers AssignedPod/Delete
    ({FIT, TAINTS}, NODE_TAINT, None, True),  # any rejector's interest suffices
    ({SILENT}, NODE_ADD, None, False),
    ({SILENT}, events.UNSCHEDULABLE_TIMEOUT, None, True),  # wildcard moves every pod
    ({"OutOfTreePlugin"}, NODE_LABEL, None, True),  # unknown plugins listen to everything
    ({SILENT}, events.FORCE_ACTIVATE, "p", True),
    ({SILENT}, events.FORCE_ACTIVATE, "other", False),  # a wildcard carrying a pod concerns it only
], ids=["fit-node-add", "fit-node-label", "taint-node-taint", "taint-pod-delete", "fit-pod-delete",
        "two-rejectors", "silent-node-add", "silent-timeout", "unknown-plugin", "force-activate-this",
        "force-activate-other"])
def test_events_move_only_pods_whose_rejectors_registered_them(
        queue: SchedulingQueue, rejectors: set[str], event: ClusterEvent, new_obj: str | None, moves: bool) -> None:
    queue.add(pod("p"))
    fail(queue, "p", *rejectors)
    target = pod(new_obj) if new_obj else None
    queue.move_all_to_active_or_backoff_queue(event, None, target)
    assert where(queue, "p") == ("backoff" if moves else "unschedulable")


@pytest.mark.parametrize(("wait", "want"), [(0.5, "backoff"), (1.0, "active"), (3.0, "active")],
                         ids=["still-backing-off", "backoff-just-over", "long-after"])
def test_moved_pod_goes_to_backoff_only_while_backing_off(
        queue: SchedulingQueue, clock: FakeClock, wait: float, want: str) -> None:
    queue.add(pod("p"))
    fail(queue, "p", FIT)
    clock.advance(wait)
    queue.move_all_to_active_or_backoff_queue(NODE_ADD)
    assert where(queue, "p") == want


def test_pre_check_filters_pods(queue: SchedulingQueue, clock: FakeClock) -> None:
    for name in ("a", "b"):
        queue.add(pod(name))
        fail(queue, name, FIT)
    clock.advance(5)
    queue.move_all_to_active_or_backoff_queue(NODE_ADD, pre_check=lambda p: p.name == "b")
    assert (where(queue, "a"), where(queue, "b")) == ("unschedulable", "active")


def test_without_an_event_map_every_event_moves_every_pod(clock: FakeClock) -> None:
    q = SchedulingQueue(clock=clock)
    q.add(pod("p"))
    fail(q, "p", SILENT)
    q.move_all_to_active_or_backoff_queue(NODE_LABEL)
    assert where(q, "p") == "backoff"


def affinity_pod(name: str, app: str) -> MakePod:
    return MakePod().name(name).pod_affinity(MakePod.term("zone", match_labels={"app": app}))


def test_assigned_pod_added_moves_pods_with_matching_affinity_only(queue: SchedulingQueue, clock: FakeClock) -> None:
    for info in (affinity_pod("wants-web", "web").info(), affinity_pod("wants-db", "db").info(), pod("plain")):
        queue.add(info)
        clock.advance(0.001)
    for name in ("wants-web", "wants-db", "plain"):
        fail(queue, name, "InterPodAffinity")
    clock.advance(5)
    queue.assigned_pod_added(MakePod().name("web-1").label("app", "web").node("n1").info())
    assert [where(queue, n) for n in ("wants-web", "wants-db", "plain")] == [
        "active", "unschedulable", "unschedulable"]


def test_assigned_pod_added_moves_spread_rejected_pods_of_its_namespace(
        queue: SchedulingQueue, clock: FakeClock) -> None:
    queue.add(pod("same-ns", namespace="team"))
    queue.add(pod("other-ns", namespace="elsewhere"))
    fail(queue, "same-ns", "PodTopologySpread")
    fail(queue, "other-ns", "PodTopologySpread")
    clock.advance(5)
    queue.assigned_pod_added(MakePod().name("x").namespace("team").node("n1").info())
    assert where(queue, "same-ns", "team") == "active"
    assert where(queue, "other-ns", "elsewhere") == "unschedulable"


def test_assigned_pod_scale_down_moves_everyone_interested(queue: SchedulingQueue, clock: FakeClock) -> None:
    queue.add(pod("needs-room"))
    fail(queue, "needs-room", FIT)
    clock.advance(5)
    old = MakePod().name("big").req(cpu="2").node("n1").info()
    new = MakePod().name("big").req(cpu="1").node("n1").info()
    queue.assigned_pod_updated(old, new)
    assert where(queue, "needs-room") == "active"


def test_assigned_pod_label_change_moves_affinity_pods_only(queue: SchedulingQueue, clock: FakeClock) -> None:
    queue.add(affinity_pod("wants-web", "web").info())
    queue.add(pod("needs-room"))
    fail(queue, "wants-web", "InterPodAffinity")
    fail(queue, "needs-room", FIT)
    clock.advance(5)
    old = MakePod().name("x").label("app", "db").node("n1").info()
    new = MakePod().name("x").label("app", "web").node("n1").info()
    queue.assigned_pod_updated(old, new)
    assert (where(queue, "wants-web"), where(queue, "needs-room")) == ("active", "unschedulable")


@pytest.mark.parametrize(("bound", "want_event_moves"), [(True, True), (False, True)], ids=["assigned", "pending"])
def test_pod_deleted_moves_pods_rejected_by_fit(
        queue: SchedulingQueue, clock: FakeClock, bound: bool, want_event_moves: bool) -> None:
    queue.add(pod("waiting"))
    fail(queue, "waiting", FIT)
    clock.advance(5)
    gone = MakePod().name("gone")
    if bound:
        gone = gone.node("n1")
    else:
        queue.add(gone.info())
    queue.pod_deleted(gone.info())
    assert where(queue, "gone") == "none"
    assert where(queue, "waiting") == ("active" if want_event_moves else "unschedulable")


def test_activate_skips_backoff_and_parking(queue: SchedulingQueue) -> None:
    queue.add(pod("parked"))
    queue.add(pod("backing-off"))
    fail(queue, "parked", FIT)
    qpi = queue.pop()
    assert qpi is not None
    queue.add_unschedulable_if_not_present(qpi, queue.scheduling_cycle)
    queue.activate([pod("parked"), pod("backing-off"), pod("unknown")])
    assert (where(queue, "parked"), where(queue, "backing-off"), where(queue, "unknown")) == (
        "active", "active", "none")


def test_activating_an_in_flight_pod_requeues_it_after_failure(queue: SchedulingQueue) -> None:
    queue.add(pod("p"))
    qpi = queue.pop()
    assert qpi is not None
    queue.activate([pod("p")])
    qpi.unschedulable_plugins = {FIT}
    queue.add_unschedulable_if_not_present(qpi, queue.scheduling_cycle)
    assert where(queue, "p") == "backoff"
