"""The Publisher contract: what is published can be read back, in order per partition, with keys."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from shared.adapters.memory import MemoryPublisher
from shared.events import (
    FILTER_REQUESTS,
    NODE_SHARDS,
    NODES,
    Envelope,
    FilterBatchRequested,
    NodeDeleted,
    OutgoingEvent,
    broadcast,
    envelope,
)
from shared.ports import Publisher

Reader = Callable[[str, int], Awaitable[list[tuple[int, Envelope]]]]


@pytest.fixture(params=["memory", pytest.param("kafka", marks=pytest.mark.integration)])
def backend_pair(request: pytest.FixtureRequest) -> tuple[Publisher, Reader]:
    if request.param == "memory":
        memory = MemoryPublisher()

        async def read_memory(topic: str, count: int) -> list[tuple[int, Envelope]]:
            return [(o.partition if o.partition is not None else -1, o.envelope) for o in memory.on(topic)][:count]

        return memory, read_memory

    from tests.integration.helpers import read_events

    env = request.getfixturevalue("berth_env")

    async def read_kafka(topic: str, count: int) -> list[tuple[int, Envelope]]:
        events = await read_events(env.settings, env.registry, topic, count=count)
        return [(e.position.partition, e.envelope) for e in events]

    return request.getfixturevalue("publisher"), read_kafka


async def test_published_events_come_back_in_order(backend_pair: tuple[Publisher, Reader]) -> None:
    publisher, read = backend_pair
    sent = [envelope(NodeDeleted(node_name="node-a"), producer="test") for _ in range(5)]
    await publisher.publish([OutgoingEvent(NODES, e) for e in sent])
    got = await read(NODES, 5)
    assert [e for _, e in got] == sent, "one key, one partition, publication order"
    assert {e.key for _, e in got} == {"node-a"}


async def test_broadcast_reaches_every_shard(backend_pair: tuple[Publisher, Reader]) -> None:
    publisher, read = backend_pair
    env = envelope(FilterBatchRequested(batch_id="b1", cycle=1, phase="prefilter", pods=[]), producer="queue")
    await publisher.publish(broadcast(FILTER_REQUESTS, env, NODE_SHARDS))
    got = await read(FILTER_REQUESTS, NODE_SHARDS)
    assert sorted(p for p, _ in got) == list(range(NODE_SHARDS))
    assert {e.event_id for _, e in got} == {env.event_id}


async def test_events_on_the_wrong_topic_are_refused(backend_pair: tuple[Publisher, Reader]) -> None:
    publisher, _ = backend_pair
    with pytest.raises(ValueError, match="does not belong"):
        await publisher.publish([OutgoingEvent(FILTER_REQUESTS, envelope(NodeDeleted(node_name="n"), producer="t"))])
    with pytest.raises(ValueError, match="no partition"):
        await publisher.publish(
            [OutgoingEvent(NODES, envelope(NodeDeleted(node_name="n"), producer="t"), partition=99)])
