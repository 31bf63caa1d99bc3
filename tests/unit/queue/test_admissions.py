"""The queue asks a node's binder to admit each pod created on it (spec.nodeName): once, again when
the binder did not know the node yet, and only once the node exists."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from prometheus_client import CollectorRegistry

from services.queue import admissions
from services.queue.gather import Gatherer
from services.queue.metrics import SchedulerMetrics
from services.queue.options import SchedulerOptions
from services.queue.scheduler import Scheduler
from services.queue.share import QueueShare
from services.runtime.scheduler_config import profiles_from
from shared.binding import NODE_NOT_FOUND
from shared.cluster import ClusterView
from shared.events import (
    BINDS,
    AnyEvent,
    BindRejected,
    BindRequested,
    NodeUpserted,
    OutgoingEvent,
    PodSubmitted,
    envelope,
)
from tests.unit.events.samples import make_node, make_pod


class Log:
    def __init__(self) -> None:
        self.published: list[OutgoingEvent] = []

    async def publish(self, events: Sequence[OutgoingEvent]) -> None:
        self.published += events

    def asked(self) -> list[str]:
        return [e.envelope.payload.attempt_id for e in self.published
                if e.topic == BINDS and isinstance(e.envelope.payload, BindRequested)]


def _queue(log: Log, *nodes: str, share: QueueShare = QueueShare()) -> Scheduler:
    view = ClusterView()
    for name in nodes:
        view.apply(envelope(NodeUpserted(node=make_node(name)), producer="t"))
    s = Scheduler(view, profiles_from(None), Gatherer(), log.publish, SchedulerMetrics(CollectorRegistry()),
                  SchedulerOptions(share=share))
    s.start_live()
    return s


def _fold(s: Scheduler, payload: AnyEvent) -> None:
    env = envelope(payload, producer="t")
    s.view.apply(env)
    s.on_event(env, None)  # type: ignore[arg-type]  # handed in, not read from the log


async def test_a_pod_created_on_a_node_is_asked_about_once() -> None:
    log = Log()
    s = _queue(log, "n1")
    _fold(s, PodSubmitted(pod=make_pod("sys", "u1", node_name="n1")))
    await s.between_cycles()
    _fold(s, log.published[0].envelope.payload)  # the queue reads its own request back
    await s.between_cycles()
    assert log.asked() == ["admission/u1/1"] and s.admissions.pending()


async def test_a_pod_on_a_missing_node_waits_for_the_node() -> None:
    log = Log()
    s = _queue(log)
    _fold(s, PodSubmitted(pod=make_pod("late", "u1", node_name="n9")))
    await s.between_cycles()
    assert log.asked() == [] and not s.admissions.pending()
    _fold(s, NodeUpserted(node=make_node("n9")))
    await s.between_cycles()
    assert log.asked() == ["admission/u1/1"]


async def test_a_binder_that_did_not_know_the_node_is_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(admissions, "ADMISSION_RETRY_S", 0.0)
    log = Log()
    s = _queue(log, "n1")
    _fold(s, PodSubmitted(pod=make_pod("sys", "u1", node_name="n1")))
    await s.between_cycles()
    _fold(s, BindRejected(pod_uid="u1", node_name="n1", attempt_id="admission/u1/1", reason=NODE_NOT_FOUND))
    assert s.admissions.pending(), "lockstep keeps waiting while it is asked again"
    await s.between_cycles()
    assert log.asked() == ["admission/u1/1", "admission/u1/2"]


async def test_a_refused_pod_is_not_asked_about_again() -> None:
    log = Log()
    s = _queue(log, "n1")
    _fold(s, PodSubmitted(pod=make_pod("big", "u1", node_name="n1")))
    await s.between_cycles()
    _fold(s, BindRejected(pod_uid="u1", node_name="n1", attempt_id="admission/u1/1", reason="Pod was rejected",
                          status_reason="OutOfcpu"))
    await s.between_cycles()
    assert log.asked() == ["admission/u1/1"] and not s.admissions.pending()


async def test_a_pod_created_on_a_node_counts_there_from_its_request() -> None:
    # Upstream's cache holds such a pod at once: a pod scheduled before the queue reads its own
    # request back must not be decided onto the room it takes (its node's binder would refuse it).
    log = Log()
    s = _queue(log, "n1")
    _fold(s, PodSubmitted(pod=make_pod("sys", "u1", cpu="1", node_name="n1")))
    assert s.view.node_of("u1") == "n1"
    assert s.view.nodes["n1"].requested.milli_cpu == 1000
    _fold(s, BindRejected(pod_uid="u1", node_name="n1", attempt_id="admission/u1/1", reason="OutOfcpu",
                          status_reason="OutOfcpu"))
    assert s.view.node_of("u1") is None and s.view.nodes["n1"].requested.milli_cpu == 0


async def test_only_the_queue_that_would_schedule_a_pod_asks_about_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(admissions, "ADMISSION_RETRY_S", 0.0)
    logs = [Log(), Log()]
    queues = [_queue(log, "n1", share=QueueShare(i, 2)) for i, log in enumerate(logs)]
    pods = [make_pod(f"sys-{k}", f"u{k}", node_name="n1") for k in range(8)]
    for s in queues:
        for pod in pods:
            _fold(s, PodSubmitted(pod=pod))
            _fold(s, BindRejected(pod_uid=pod.metadata.uid or "", node_name="n1",
                                  attempt_id=f"admission/{pod.metadata.uid}/1", reason=NODE_NOT_FOUND))
        await s.between_cycles()
    asked = [{a.split("/")[1] for a in log.asked()} for log in logs]
    assert asked[0] and asked[1] and not asked[0] & asked[1]
    assert asked[0] | asked[1] == {f"u{k}" for k in range(8)}
    assert all(len(log.asked()) == 2 * len(a) for log, a in zip(logs, asked, strict=True)), "asked, then again"
    # A queue that reads only the other's pods being refused has nothing of its own pending.
    bystander = _queue(Log(), "n1", share=QueueShare(1, 2))
    for pod in pods:
        if pod.metadata.uid in asked[0]:
            _fold(bystander, PodSubmitted(pod=pod))
            _fold(bystander, BindRejected(pod_uid=pod.metadata.uid or "", node_name="n1",
                                          attempt_id=f"admission/{pod.metadata.uid}/1", reason=NODE_NOT_FOUND))
    assert not bystander.admissions.pending()



def test_another_queues_admission_read_before_its_pod_is_not_left_pending() -> None:
    # `binds` and `pods` are read side by side: a request can come before the pod it is about.
    pods = [make_pod(f"sys-{k}", f"u{k}", node_name="n1") for k in range(8)]
    theirs = [p for p in pods if not QueueShare(1, 2).owns(p)]
    s = _queue(Log(), "n1", share=QueueShare(1, 2))
    for pod in theirs:
        uid = pod.metadata.uid or ""
        _fold(s, BindRequested(pod_uid=uid, pod=pod, node_name="n1", attempt_id=f"admission/{uid}/1", seed=0))
        _fold(s, PodSubmitted(pod=pod))
        _fold(s, BindRejected(pod_uid=uid, node_name="n1", attempt_id=f"admission/{uid}/1",
                              reason="Pod was rejected", status_reason="OutOfcpu"))
    assert theirs and not s.admissions.pending()
