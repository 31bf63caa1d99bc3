"""Reading a topic back as it is, for `berth events` and tests: no consumer group, no commits."""

from __future__ import annotations

from collections.abc import AsyncIterator

from shared.errors import DecodeError
from shared.events import Envelope, Position, TopicRegistry
from shared.settings import Settings

from .clients import make_consumer
from .tail import Tail


async def read_topic(
    settings: Settings,
    topic: str,
    *,
    registry: TopicRegistry | None = None,
    follow: bool = False,
    idle_timeout_ms: int = 500,
) -> AsyncIterator[tuple[Position, Envelope | DecodeError, bytes]]:
    """Every message of a logical topic from the beginning, per partition in order, decoded when it
    decodes (else the DecodeError). Without `follow` it ends once the partitions' ends are reached."""
    registry = registry or TopicRegistry(settings.topic_prefix)
    registry.spec(topic)  # an unknown topic fails before anything connects
    consumer = make_consumer(settings, group_id=None, client_id=f"{settings.service_name}-reader")
    await consumer.start()
    try:
        tail = Tail(consumer, registry, [topic])
        await tail.skip_empty()
        while follow or not tail.at_end:
            records = await tail.fetch(idle_timeout_ms)
            for record in sorted(records, key=lambda r: r.position.partition):
                yield record.position, record.event, record.raw
            await tail.reached_ends()
    finally:
        await consumer.stop()
