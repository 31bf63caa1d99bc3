"""The queue's pending pods carry the nomination the view holds, whether the preemptor's
PodNominated or an eviction made for it is read first."""

from __future__ import annotations

from collections.abc import Sequence

from prometheus_client import CollectorRegistry

from services.queue.gather import Gatherer
from services.queue.metrics import SchedulerMetrics
from services.queue.scheduler import Scheduler
from services.runtime.scheduler_config import profiles_from
from shared.cluster import ClusterView
from shared.events import (
    AnyEvent,
    NodeUpserted,
    OutgoingEvent,
    PodBound,
    PodEvicted,
    PodNominated,
    PodSubmitted,
    envelope,
)
from tests.unit.events.samples import make_node, make_pod


async def _publish(events: Sequence[OutgoingEvent]) -> None:
    pass


def _queue() -> Scheduler:
    view = ClusterView()
    view.apply(envelope(NodeUpserted(node=make_node("n1")), producer="t"))
    s = Scheduler(view, profiles_from(None), Gatherer(), _publish, SchedulerMetrics(CollectorRegistry()))
    s.start_live()
    for event in (PodSubmitted(pod=make_pod("victim", cpu="1", priority=0, node_name="n1")),
                  PodBound(pod_uid="uid-victim", node_name="n1", attempt_id="admission/uid-victim/1"),
                  PodSubmitted(pod=make_pod("pre", cpu="1", priority=100, scheduler_name="default-scheduler"))):
        _fold(s, event)
    return s


def _fold(s: Scheduler, payload: AnyEvent) -> None:
    env = envelope(payload, producer="t")
    s.view.apply(env)
    s.on_event(env, None)  # type: ignore[arg-type]  # handed in, not read from the log


def _nominated(s: Scheduler) -> str:
    return s.queued["uid-pre"].pod.status.nominated_node_name


def test_an_eviction_read_first_nominates_the_queued_preemptor() -> None:
    s = _queue()
    _fold(s, PodEvicted(uid="uid-victim", preemptor_uid="uid-pre", node_name="n1", request_at=3))
    assert _nominated(s) == "n1"
    assert [p.uid for p in s.queue.nominator.nominated_pods_for_node("n1")] == ["uid-pre"]


def test_a_nomination_older_than_an_eviction_read_is_not_taken() -> None:
    s = _queue()
    _fold(s, PodEvicted(uid="uid-victim", preemptor_uid="uid-pre", node_name="n1", request_at=7))
    _fold(s, PodNominated(uid="uid-pre", node_name="", request_at=3))  # an earlier decision's clear
    assert _nominated(s) == "n1"
