"""A filter worker's or the preemption service's follower, once caught up, fetches only while a
request waits for events it has not received (the preemption service's: on to the log's ends): an
idle follower's empty fetches cost the broker more than the follower itself."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

from aiokafka import TopicPartition

from services.runtime.follower import LogFollower
from shared.cluster import ClusterView
from shared.events import NODES, NodeUpserted, TopicRegistry, encode, envelope
from shared.settings import load_service_settings
from tests.unit.events.samples import make_node

REGISTRY = TopicRegistry()


class FakeConsumer:
    """The log of `nodes`, partition 0; records past `available` appear when the test says so."""

    def __init__(self, records: list[bytes], available: int) -> None:
        self.records, self.available = records, available
        self.next = 0
        self.paused: set[TopicPartition] = set()
        self.fetches = 0
        self.tp: TopicPartition | None = None

    def assign(self, tps: list[TopicPartition]) -> None:
        self.tp = next(tp for tp in tps if tp.partition == 0 and tp.topic == REGISTRY.physical(NODES))

    def seek(self, tp: TopicPartition, offset: int) -> None:
        if tp == self.tp:
            self.next = offset

    def pause(self, *tps: TopicPartition) -> None:
        self.paused |= set(tps)

    def resume(self, *tps: TopicPartition) -> None:
        self.paused -= set(tps)

    def highwater(self, tp: TopicPartition) -> int:
        return self.available if tp == self.tp else 0

    async def position(self, tp: TopicPartition) -> int:
        return self.next if tp == self.tp else 0

    async def getmany(self, timeout_ms: int = 0) -> dict[TopicPartition, list[Any]]:
        assert self.tp is not None
        self.fetches += 1
        await asyncio.sleep(0)
        if self.tp in self.paused or self.next >= self.available:
            await asyncio.sleep(0.01)
            return {}
        out = [SimpleNamespace(offset=i, value=self.records[i]) for i in range(self.next, self.available)]
        self.next = self.available
        return {self.tp: out}


@contextlib.asynccontextmanager
async def _following(service: str, nodes: int, available: int,
                     **options: Any) -> AsyncIterator[tuple[FakeConsumer, LogFollower]]:
    """A follower of `nodes` nodes' log, `available` of them there at start, caught up."""
    records = [encode(envelope(NodeUpserted(node=make_node(f"n{i}")), producer="t")) for i in range(nodes)]
    consumer = FakeConsumer(records, available=available)
    follower = LogFollower(load_service_settings(service, {}), REGISTRY, (NODES,), ClusterView(), **options)
    task = asyncio.ensure_future(follower.follow(consumer))
    try:
        await asyncio.wait_for(follower.caught_up.wait(), 2)
        yield consumer, follower
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def _fetches_nothing(consumer: FakeConsumer) -> None:
    await asyncio.sleep(0.05)
    idle = consumer.fetches
    await asyncio.sleep(0.1)
    assert consumer.fetches == idle and consumer.paused, "caught up and nothing asked: no fetch"


async def test_an_idle_follower_fetches_nothing_until_a_request_needs_more() -> None:
    async with _following("filter", 4, 2, gated=(NODES,), on_demand=True) as (consumer, follower):
        await _fetches_nothing(consumer)
        consumer.available = 4  # two more nodes in the log; a request names them
        watermark = {NODES: [4, 0, 0, 0]}
        assert await follower.wait_reached(watermark, 2)
        assert sorted(follower.view.nodes) == ["n0", "n1", "n2", "n3"]
        await asyncio.sleep(0.05)
        assert consumer.paused, "received what was asked: paused again"


async def test_a_request_folding_all_received_fetches_on_to_the_ends_then_pauses() -> None:
    """The preemption service decides on the view folded on to everything in the log by then,
    past the request's watermark, as a follower fetching all along would have."""
    async with _following("preemption", 5, 1, gated=(NODES,), on_demand=True) as (consumer, follower):
        await _fetches_nothing(consumer)
        consumer.available = 4  # the request saw two nodes; four are in the log by now
        assert await follower.wait_reached({NODES: [2, 0, 0, 0]}, 2, fold_received=True)
        assert sorted(follower.view.nodes) == ["n0", "n1", "n2", "n3"]
        await asyncio.sleep(0.05)
        assert consumer.paused, "at the ends: paused again"

        consumer.available = 5
        assert await follower.wait_reached({NODES: [4, 0, 0, 0]}, 2, fold_received=True)
        assert sorted(follower.view.nodes) == ["n0", "n1", "n2", "n3", "n4"], "each request makes a pass"


async def test_topics_read_until_caught_up_are_not_read_past_their_ends_at_start() -> None:
    """The queue reads its own decisions and binds only to rebuild what it wrote before a restart."""
    async with _following("queue", 4, 2, until_caught_up=(NODES,)) as (consumer, follower):
        assert sorted(follower.view.nodes) == ["n0", "n1"]
        consumer.available = 4
        await asyncio.sleep(0.1)
        assert consumer.tp in consumer.paused and sorted(follower.view.nodes) == ["n0", "n1"]
