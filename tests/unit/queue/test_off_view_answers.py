"""A batch a worker answered from a view other than its request's watermark (its wait for the
queue's events ran out, or it had folded past them) is decided as a batch whose view moved: every
pod re-checked where it goes, and the decision recorded as late, on the queue's own view."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from prometheus_client import CollectorRegistry

from services.queue.drivers import Pipelined
from services.queue.gather import Gatherer
from services.queue.metrics import SchedulerMetrics
from services.queue.scheduler import Scheduler
from services.runtime.scheduler_config import profiles_from
from shared.cluster import ClusterView
from shared.events import (
    BindRequested,
    LateBatchDecided,
    NodeUpserted,
    OutgoingEvent,
    PodShardResult,
    PodSubmitted,
    ShardFiltered,
    envelope,
)
from shared.protocol.sharded import MergedFilter
from tests.unit.events.samples import make_node
from tests.unit.preemption.support import make_pod
from tests.unit.queue.support import answering


async def test_the_gatherer_tells_a_batch_answered_off_its_watermark_once() -> None:
    gatherer = Gatherer(shards=1)
    gatherer.expect("on", "filter")
    gatherer.expect("off", "filter")
    gatherer.offer(ShardFiltered(batch_id="on", cycle=1, shard=0, phase="filter", node_count=1,
                                 results=[PodShardResult(pod_uid="a")]))
    gatherer.offer(ShardFiltered(batch_id="off", cycle=1, shard=0, phase="filter", node_count=1,
                                 results=[PodShardResult(pod_uid="b")], folded={"pods": [3]}))
    for batch_id in ("on", "off"):
        assert await gatherer.wait(batch_id, "filter", 1.0) is not None
    assert not gatherer.answered_off_view("on")
    assert gatherer.answered_off_view("off") and not gatherer.answered_off_view("off")


async def test_a_batch_answered_off_its_watermark_is_decided_late(monkeypatch: pytest.MonkeyPatch) -> None:
    published: list[OutgoingEvent] = []

    async def publish(events: Sequence[OutgoingEvent]) -> None:
        published.extend(events)

    view = ClusterView()
    view.apply(envelope(NodeUpserted(node=make_node("node-a", cpu="4")), producer="t"))
    view.apply(envelope(PodSubmitted(pod=make_pod("web", cpu="1", priority=0)), producer="t"))
    s = Scheduler(view, profiles_from(None), Gatherer(), publish, SchedulerMetrics(CollectorRegistry()))
    s.start_live()

    monkeypatch.setattr(s, "evaluate", answering(s, lambda: MergedFilter(feasible=["node-a"]), off_view=True))
    batch = s.pop_batch()
    assert batch is not None
    await Pipelined(s).run(batch, asyncio.Event())
    kinds = [type(e.envelope.payload) for e in published]
    assert LateBatchDecided in kinds and BindRequested in kinds
    late = next(e.envelope.payload for e in published if isinstance(e.envelope.payload, LateBatchDecided))
    assert late.batch_id == "batch-1"
