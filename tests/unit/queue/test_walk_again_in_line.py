"""The queue service lets a batch's pod walk again on its view (its ranked nodes were taken by pods
decided before it) only while no waiting pod would be scheduled first, as one scheduler deciding
pods one at a time would schedule that pod first, and no pod of higher priority waits for its
preemption to be decided (one scheduler would have nominated it a node already)."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

from prometheus_client import CollectorRegistry

from services.queue.gather import Gatherer
from services.queue.metrics import SchedulerMetrics
from services.queue.scheduler import Scheduler
from services.runtime.scheduler_config import profiles_from
from shared.cluster import ClusterView
from shared.events import NodeUpserted, OutgoingEvent, PodSubmitted, envelope
from shared.framework.pod_info import PodInfo
from shared.queue import QueuedPodInfo
from tests.unit.events.samples import make_node
from tests.unit.preemption.support import make_pod


async def _publish(events: Sequence[OutgoingEvent]) -> None:
    return None


def _popped() -> tuple[Scheduler, QueuedPodInfo]:
    """A live queue that has popped its one pending pod, "mid" (priority 10)."""
    view = ClusterView()
    view.apply(envelope(NodeUpserted(node=make_node("node-a", cpu="4")), producer="t"))
    view.apply(envelope(PodSubmitted(pod=make_pod("mid", cpu="1", priority=10)), producer="t"))
    s = Scheduler(view, profiles_from(None), Gatherer(), _publish, SchedulerMetrics(CollectorRegistry()))
    s.start_live()
    batch = s.pop_batch()
    assert batch is not None and len(batch) == 1
    return s, batch[0]


def test_a_popped_pod_walks_again_only_with_nobody_ahead_of_it_waiting() -> None:
    s, popped = _popped()
    assert s.first_in_line(popped)  # nobody waits

    s.queue.add(PodInfo(make_pod("low", cpu="1", priority=0)))
    assert s.first_in_line(popped)  # the waiting pod comes after it

    s.queue.add(PodInfo(make_pod("high", cpu="1", priority=100)))
    assert not s.first_in_line(popped)  # this one would be scheduled first


def test_a_popped_pod_does_not_walk_again_while_a_higher_priority_preemption_is_decided() -> None:
    s, popped = _popped()
    for priority, allowed in ((5, True), (10, True), (100, False)):
        waiting = SimpleNamespace(info=PodInfo(make_pod(f"pre-{priority}", cpu="1", priority=priority)))
        s.preemptions = {"attempt": (None, waiting, "batch")}  # type: ignore[dict-item]  # only the priority is read
        assert s.first_in_line(popped) is allowed, priority
