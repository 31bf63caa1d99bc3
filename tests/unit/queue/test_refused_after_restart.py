"""A pod whose bind was in flight when the queue started is assumed, not queued: if that bind is
refused, the pod is queued then, as any pod whose bind failed (it was left pending for good)."""

from __future__ import annotations

from collections.abc import Sequence

from prometheus_client import CollectorRegistry

from services.queue.gather import Gatherer
from services.queue.metrics import SchedulerMetrics
from services.queue.options import SchedulerOptions
from services.queue.scheduler import Scheduler
from services.queue.share import QueueShare
from services.runtime.scheduler_config import profiles_from
from shared.cluster import ClusterView
from shared.events import AnyEvent, BindRejected, BindRequested, NodeUpserted, OutgoingEvent, PodSubmitted, envelope
from tests.unit.events.samples import make_node, make_pod


async def _publish(events: Sequence[OutgoingEvent]) -> None:
    return None


def _fold(s: Scheduler, payload: AnyEvent) -> None:
    env = envelope(payload, producer="t")
    s.view.apply(env)
    s.on_event(env, None)  # type: ignore[arg-type]  # handed in, not read from the log


def _restarted(share: QueueShare = QueueShare()) -> tuple[Scheduler, str]:
    s = Scheduler(ClusterView(), profiles_from(None), Gatherer(), _publish, SchedulerMetrics(CollectorRegistry()),
                  SchedulerOptions(share=share))
    pod = make_pod("web", "u1", scheduler_name="default-scheduler")
    _fold(s, NodeUpserted(node=make_node("n1")))
    _fold(s, PodSubmitted(pod=pod))
    _fold(s, BindRequested(pod_uid="u1", pod=pod, node_name="n1", attempt_id="u1/1", seed=0))
    s.start_live()
    return s, "u1"


def test_a_bind_in_flight_at_start_that_is_refused_queues_its_pod() -> None:
    s, uid = _restarted()
    assert s.view.node_of(uid) == "n1" and uid not in s.queued
    _fold(s, BindRejected(pod_uid=uid, node_name="n1", attempt_id=f"{uid}/1", reason="Insufficient cpu"))
    assert s.view.node_of(uid) is None and uid in s.queued


def test_only_the_queue_that_owns_the_pod_queues_it() -> None:
    owners = []
    for index in range(2):
        s, uid = _restarted(QueueShare(index, 2))
        _fold(s, BindRejected(pod_uid=uid, node_name="n1", attempt_id=f"{uid}/1", reason="Insufficient cpu"))
        owners += [index] if uid in s.queued else []
    assert len(owners) == 1
