"""A decided pod whose bind the binder refuses: alone, the queue backs it off as upstream's are
when their bind fails; where queues share the cluster the refusal is a race lost to another
queue's pod, so it is tried again at once, and a second refusal before it is bound backs off."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from prometheus_client import CollectorRegistry

from services.queue.drivers import Pipelined
from services.queue.gather import Gatherer
from services.queue.metrics import SchedulerMetrics
from services.queue.options import SchedulerOptions
from services.queue.scheduler import Scheduler
from services.queue.share import QueueShare
from services.runtime.scheduler_config import profiles_from
from shared.cluster import ClusterView
from shared.events import (
    AnyEvent,
    BindRejected,
    BindRequested,
    NodeUpserted,
    OutgoingEvent,
    PodBound,
    PodSubmitted,
    envelope,
)
from shared.events.partitioning import kafka_partition
from shared.protocol.sharded import MergedFilter
from tests.unit.events.samples import make_node
from tests.unit.preemption.support import make_pod
from tests.unit.queue.support import answering, where

REASON = "node(s) didn't match pod anti-affinity rules"
POD = make_pod("web", cpu="1", priority=0)


def _fold(s: Scheduler, payload: AnyEvent) -> None:
    env = envelope(payload, producer="t")
    s.view.apply(env)
    s.on_event(env, None)  # type: ignore[arg-type]  # handed in, not read from the log


async def _decided(share: QueueShare, monkeypatch: pytest.MonkeyPatch) -> tuple[Scheduler, BindRequested]:
    """A queue of `share` that owns pod "web" and has decided it onto node-a (its bind in flight)."""
    binds: list[BindRequested] = []

    async def publish(events: Sequence[OutgoingEvent]) -> None:
        binds.extend(e.envelope.payload for e in events if isinstance(e.envelope.payload, BindRequested))

    s = Scheduler(ClusterView(), profiles_from(None), Gatherer(), publish, SchedulerMetrics(CollectorRegistry()),
                  SchedulerOptions(share=share))
    _fold(s, NodeUpserted(node=make_node("node-a", cpu="4")))
    _fold(s, PodSubmitted(pod=POD))
    s.start_live()
    monkeypatch.setattr(s, "evaluate", answering(s, lambda: MergedFilter(feasible=["node-a"])))
    batch = s.pop_batch()
    assert batch is not None
    await Pipelined(s).run(batch, asyncio.Event())
    assert len(binds) == 1
    return s, binds[0]


def _owner(queues: int) -> QueueShare:
    """The share of `queues` that owns POD (by its uid's hash)."""
    return QueueShare(kafka_partition(POD.metadata.uid, queues), queues)


def _refuse(s: Scheduler, bind: BindRequested) -> None:
    _fold(s, bind)
    _fold(s, BindRejected(pod_uid=bind.pod_uid, node_name=bind.node_name, attempt_id=bind.attempt_id,
                          reason=REASON))


async def test_alone_a_refused_pod_backs_off(monkeypatch: pytest.MonkeyPatch) -> None:
    s, bind = await _decided(QueueShare(), monkeypatch)
    _refuse(s, bind)
    assert where(s.queue, "web") == "backoff"


async def test_sharing_the_cluster_a_refused_pod_is_tried_again_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    s, bind = await _decided(_owner(2), monkeypatch)
    _refuse(s, bind)
    assert where(s.queue, "web") == "active"
    batch = s.pop_batch()
    assert batch is not None and [q.uid for q in batch] == [bind.pod_uid]


async def test_refused_twice_before_it_is_bound_it_backs_off(monkeypatch: pytest.MonkeyPatch) -> None:
    s, bind = await _decided(_owner(2), monkeypatch)
    _refuse(s, bind)
    again: list[BindRequested] = []

    async def publish(events: Sequence[OutgoingEvent]) -> None:
        again.extend(e.envelope.payload for e in events if isinstance(e.envelope.payload, BindRequested))

    s.publish = publish
    batch = s.pop_batch()
    assert batch is not None
    await Pipelined(s).run(batch, asyncio.Event())
    assert len(again) == 1
    _refuse(s, again[0])
    assert where(s.queue, "web") == "backoff"


async def test_a_bind_clears_the_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    s, bind = await _decided(_owner(2), monkeypatch)
    _refuse(s, bind)
    assert bind.pod_uid in s.refused
    _fold(s, PodBound(pod_uid=bind.pod_uid, node_name="node-a", attempt_id=bind.attempt_id))
    assert bind.pod_uid not in s.refused


async def test_a_bind_the_queue_could_not_send_backs_off(monkeypatch: pytest.MonkeyPatch) -> None:
    # Taken back as a refusal by the queue itself (its request too large to publish): no race.
    s, bind = await _decided(_owner(2), monkeypatch)
    s._bind_rejected(BindRejected(pod_uid=bind.pod_uid, node_name=bind.node_name, attempt_id=bind.attempt_id,
                                  reason="too large"), raced=False)
    assert where(s.queue, "web") == "backoff"
