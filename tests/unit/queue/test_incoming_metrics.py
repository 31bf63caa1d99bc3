"""What scheduler_queue_incoming_pods_total, scheduler_pending_pods and scheduler_unschedulable_pods
are fed from."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from services.queue import metrics
from services.queue.metrics import SchedulerMetrics
from shared.framework import events
from shared.framework.events import ActionType, ClusterEvent
from shared.queue import FakeClock, SchedulingQueue

from .support import FIT, TAINTS, fail, pod


def test_every_pod_entering_a_queue_is_told_with_its_event(queue: SchedulingQueue, clock: FakeClock) -> None:
    told: list[tuple[str, str]] = []
    queue.on_incoming = lambda q, e: told.append((q, e))
    queue.add(pod("a"))
    fail(queue, "a", FIT)
    queue.move_all_to_active_or_backoff_queue(ClusterEvent(events.NODE, ActionType.ADD, "NodeAdd"))
    clock.advance(20)
    queue.flush_backoff_q_completed()
    assert told == [("active", "UnscheduledPodAdd"), ("unschedulable", "ScheduleAttemptFailure"),
                    ("backoff", "NodeAdd"), ("active", "BackoffComplete")]


def test_unschedulable_pods_are_counted_per_rejecting_plugin_and_profile(queue: SchedulingQueue) -> None:
    for name in ("a", "b"):
        queue.add(pod(name))
    fail(queue, "a", FIT, TAINTS)
    fail(queue, "b", FIT)
    assert queue.unschedulable_by_plugin() == {(FIT, "default-scheduler"): 2, (TAINTS, "default-scheduler"): 1}


def test_the_gauges_follow_the_queue_and_a_plugin_no_pod_names_goes_to_zero(
        queue: SchedulingQueue, clock: FakeClock, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metrics, "PENDING_EVERY_S", 0.0)
    registry = CollectorRegistry()
    m = SchedulerMetrics(registry)

    def gauge(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name, labels)

    for name in ("a", "b"):
        queue.add(pod(name))
    fail(queue, "a", TAINTS)
    m.pending_in(queue)
    assert gauge("scheduler_pending_pods", queue="unschedulable") == 1
    assert gauge("scheduler_pending_pods", queue="active") == 1
    assert gauge("scheduler_unschedulable_pods", plugin=TAINTS, profile="default-scheduler") == 1
    queue.move_all_to_active_or_backoff_queue(ClusterEvent(events.NODE, ActionType.ADD, "NodeAdd"))
    clock.advance(20)
    queue.flush_backoff_q_completed()
    m.pending_in(queue)
    assert gauge("scheduler_pending_pods", queue="unschedulable") == 0
    assert gauge("scheduler_unschedulable_pods", plugin=TAINTS, profile="default-scheduler") == 0
