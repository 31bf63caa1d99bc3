"""A commit the group coordinator does not answer (the broker is away) does not hold a stopping
service: after a moment the batch is left uncommitted, to be consumed again, and the service stops."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

import pytest
from aiokafka import ConsumerRecord, TopicPartition

from services.runtime import Handler
from services.runtime import loop as pipeline_module
from services.runtime.dedupe import RecentEvents
from services.runtime.loop import BatchPipeline, RetryPolicy, Stopping
from services.runtime.metrics import RuntimeMetrics
from shared.events import PODS, OutgoingEvent, PodSubmitted, ReceivedEvent, TopicRegistry, encode, envelope
from tests.unit.events.samples import make_pod


class _Nothing(Handler):
    async def handle(self, event: ReceivedEvent) -> Sequence[OutgoingEvent]:
        return []


class _Published:
    async def publish(self, events: Sequence[OutgoingEvent]) -> None:
        return None


class _CoordinatorAway:
    """A consumer whose commits are never answered (the client retries them for as long as that)."""

    def __init__(self, tp: TopicPartition) -> None:
        self.tp = tp

    def assignment(self) -> set[TopicPartition]:
        return {self.tp}

    async def commit(self, offsets: dict[TopicPartition, int]) -> None:
        await asyncio.Event().wait()


async def test_a_commit_nobody_answers_leaves_the_batch_to_be_consumed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline_module, "STOPPING_COMMIT_WAIT_S", 0.2)
    registry = TopicRegistry("")
    tp = TopicPartition(registry.physical(PODS), 0)
    env = envelope(PodSubmitted(pod=make_pod("web-0")), producer="t")
    value = encode(env)
    record = ConsumerRecord(tp.topic, 0, 7, 0, 0, b"uid-web-0", value, None, 9, len(value), [])
    stopping = asyncio.Event()
    recent = RecentEvents()
    pipeline = BatchPipeline(service="s", group_id="g", handler=_Nothing(), publisher=_Published(),
                             registry=registry, metrics=RuntimeMetrics("s"), recent=recent,
                             retry=RetryPolicy(), stopping=stopping)
    processing = asyncio.ensure_future(pipeline.process(_CoordinatorAway(tp), {tp: [record]}))
    await asyncio.sleep(0.05)
    assert not processing.done()  # the commit waits while nobody asked to stop
    started = time.monotonic()
    stopping.set()
    with pytest.raises(Stopping):
        await asyncio.wait_for(processing, 5)
    assert time.monotonic() - started >= 0.2
    assert not recent.seen(PODS, 0, env.event_id)  # not remembered: consumed again, not skipped
