"""Decisions a failed publish did not deliver stay in the queue's outbox and go out with the next
publish: a pod placed in lockstep waits for its bind request's answer, so dropping that request
would hold every later pod back for good."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from prometheus_client import CollectorRegistry

from services.queue import drivers, scheduler
from services.queue.drivers import Pipelined
from services.queue.gather import Gatherer
from services.queue.metrics import SchedulerMetrics
from services.queue.options import SchedulerOptions
from services.queue.scheduler import Scheduler
from services.runtime.scheduler_config import profiles_from
from shared.cluster import ClusterView
from shared.errors import BrokerUnavailable, RecordTooLarge
from shared.events import (
    BindRequested,
    FilterBatchRequested,
    NodeUpserted,
    OutgoingEvent,
    PodSubmitted,
    SchedulingAttempted,
    envelope,
)
from shared.protocol.sharded import MergedFilter
from tests.unit.events.samples import make_node
from tests.unit.preemption.support import make_pod
from tests.unit.queue.support import answering


async def test_a_bind_request_whose_publish_failed_goes_out_with_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(drivers, "FAILED_CYCLE_PAUSE_S", 0.0)
    published: list[OutgoingEvent] = []
    failures = [BrokerUnavailable("publishing 2 event(s): KafkaTimeoutError")]

    async def publish(events: Sequence[OutgoingEvent]) -> None:
        if failures and any(isinstance(e.envelope.payload, BindRequested) for e in events):
            raise failures.pop()
        published.extend(events)

    view = ClusterView()
    view.apply(envelope(NodeUpserted(node=make_node("node-a", cpu="4")), producer="t"))
    view.apply(envelope(PodSubmitted(pod=make_pod("web", cpu="1", priority=0)), producer="t"))
    s = Scheduler(view, profiles_from(None), Gatherer(), publish, SchedulerMetrics(CollectorRegistry()),
                  SchedulerOptions(lockstep=True))
    s.start_live()

    monkeypatch.setattr(s, "evaluate", answering(s, lambda: MergedFilter(feasible=["node-a"])))
    batch = s.pop_batch()
    assert batch is not None and len(batch) == 1
    await s.driver.run(batch, asyncio.Event())  # the cycle places the pod; its publish fails
    assert not failures and published == []
    assert s.pop_batch() is None  # lockstep waits for the placed pod's bind to be answered

    await s.between_cycles()
    kinds = [type(e.envelope.payload) for e in published]
    assert kinds == [SchedulingAttempted, BindRequested]
    bind = published[1].envelope.payload
    assert isinstance(bind, BindRequested) and (bind.pod_uid, bind.node_name) == (batch[0].pod_info.uid, "node-a")


async def test_a_bind_request_no_record_can_hold_is_taken_back_and_the_rest_published(
        monkeypatch: pytest.MonkeyPatch) -> None:
    published: list[OutgoingEvent] = []

    async def publish(events: Sequence[OutgoingEvent]) -> None:
        if any(isinstance(e.envelope.payload, BindRequested) and e.envelope.payload.pod_uid == "uid-big"
               for e in events):
            raise RecordTooLarge("publishing: BindRequested 'node-a' is 17000000 bytes, above 16777216")
        published.extend(events)

    view = ClusterView()
    view.apply(envelope(NodeUpserted(node=make_node("node-a", cpu="4")), producer="t"))
    for name in ("big", "small"):
        view.apply(envelope(PodSubmitted(pod=make_pod(name, cpu="1", priority=0)), producer="t"))
    s = Scheduler(view, profiles_from(None), Gatherer(), publish, SchedulerMetrics(CollectorRegistry()))
    s.start_live()

    monkeypatch.setattr(s, "evaluate", answering(s, lambda: MergedFilter(feasible=["node-a"])))
    batch = s.pop_batch()
    assert batch is not None and len(batch) == 2
    await Pipelined(s).run(batch, asyncio.Event())
    binds = [e.envelope.payload.pod_uid for e in published if isinstance(e.envelope.payload, BindRequested)]
    assert binds == ["uid-small"]
    assert "uid-big" not in view.assumed and "uid-small" in view.assumed
    pending = s.queue.pending_pods()
    assert [q.pod_info.name for q in [*pending.backoff, *pending.unschedulable]] == ["big"]


async def test_a_filter_request_no_record_can_hold_makes_the_next_batches_smaller(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(drivers, "FAILED_CYCLE_PAUSE_S", 0.0)

    async def publish(events: Sequence[OutgoingEvent]) -> None:
        for e in events:
            p = e.envelope.payload
            if isinstance(p, FilterBatchRequested) and len(p.pods) > 4:
                raise RecordTooLarge(f"publishing: FilterBatchRequested of {len(p.pods)} pods, above the limit")

    view = ClusterView()
    view.apply(envelope(NodeUpserted(node=make_node("node-a", cpu="64")), producer="t"))
    for i in range(10):
        view.apply(envelope(PodSubmitted(pod=make_pod(f"web-{i}", cpu="1", priority=0)), producer="t"))
    s = Scheduler(view, profiles_from(None), Gatherer(), publish, SchedulerMetrics(CollectorRegistry()),
                  SchedulerOptions(batch_size=8))
    s.start_live()
    batch = s.pop_batch()
    assert batch is not None and len(batch) == 8
    await Pipelined(s).run(batch, asyncio.Event())  # refused: the pods go back to the queue
    assert len(s.queue) == 10
    smaller = s.pop_batch()
    assert smaller is not None and len(smaller) == 4
    s.put_back(q.pod_info for q in smaller)

    monkeypatch.setattr(scheduler, "SMALLER_FOR_S", 0.0)
    s.request_too_large(8)  # and at once over
    again = s.pop_batch()
    assert again is not None and len(again) == 8


async def test_a_pod_whose_request_alone_no_record_holds_fails_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    published: list[OutgoingEvent] = []

    async def publish(events: Sequence[OutgoingEvent]) -> None:
        for e in events:
            p = e.envelope.payload
            if isinstance(p, FilterBatchRequested) and any(pod.metadata.name == "huge" for pod in p.pods):
                raise RecordTooLarge("publishing: FilterBatchRequested is 17000000 bytes, above 16777216")
        published.extend(events)

    view = ClusterView()
    view.apply(envelope(NodeUpserted(node=make_node("node-a", cpu="64")), producer="t"))
    view.apply(envelope(PodSubmitted(pod=make_pod("huge", cpu="1", priority=0)), producer="t"))
    s = Scheduler(view, profiles_from(None), Gatherer(), publish, SchedulerMetrics(CollectorRegistry()),
                  SchedulerOptions(batch_size=8))
    s.start_live()
    batch = s.pop_batch()
    assert batch is not None and len(batch) == 1
    await Pipelined(s).run(batch, asyncio.Event())
    failed = [e.envelope.payload for e in published if isinstance(e.envelope.payload, SchedulingAttempted)]
    assert len(failed) == 1 and failed[0].node_name is None
    assert "too large to send" in (failed[0].message or "")
    for i in range(10):
        env = envelope(PodSubmitted(pod=make_pod(f"web-{i}", cpu="1", priority=0)), producer="t")
        view.apply(env)
        s.on_event(env, None)  # type: ignore[arg-type]  # handed in, not read from the log
    following = s.pop_batch()
    assert following is not None and len(following) == 8  # the batches are not made smaller for it
