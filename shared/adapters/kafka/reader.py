"""Reading a topic back as it is, for `berth events` and tests: no consumer group, no commits."""

from __future__ import annotations

from collections.abc import AsyncIterator

from aiokafka import AIOKafkaConsumer, TopicPartition

from shared.errors import DecodeError
from shared.events import Envelope, Position, TopicRegistry, decode
from shared.settings import Settings


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
    physical = registry.physical(topic)
    consumer = AIOKafkaConsumer(bootstrap_servers=settings.kafka_bootstrap_servers, group_id=None,
                                enable_auto_commit=False, auto_offset_reset="earliest",
                                client_id=f"{settings.service_name}-reader",
                                max_partition_fetch_bytes=settings.kafka_max_message_bytes)
    await consumer.start()
    try:
        tps = [TopicPartition(physical, p) for p in range(registry.spec(topic).partitions)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        ends = await consumer.end_offsets(tps)
        remaining = {tp for tp in tps if ends[tp] > 0}
        while follow or remaining:
            batch = await consumer.getmany(timeout_ms=idle_timeout_ms)
            for tp, messages in sorted(batch.items(), key=lambda kv: kv[0].partition):
                for message in messages:
                    position = Position(topic, tp.partition, message.offset)
                    raw = message.value or b""
                    decoded: Envelope | DecodeError
                    try:
                        decoded = decode(raw, topic=topic)
                    except DecodeError as exc:
                        decoded = exc
                    yield position, decoded, raw
            # A partition is done when the position reaches the high watermark of the fetch
            # responses: Tansu's ListOffsets(latest) can be short (the last batch's base offset + 1),
            # so `ends` only tells which partitions are empty.
            for tp in sorted(remaining, key=lambda t: t.partition):
                high = consumer.highwater(tp)
                if high is not None and await consumer.position(tp) >= high:
                    remaining.discard(tp)
    finally:
        await consumer.stop()
