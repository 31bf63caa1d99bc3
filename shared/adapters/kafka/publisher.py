"""The Kafka `Publisher`: encodes envelopes with the wire codec and waits until all are acknowledged."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError

from shared.errors import BrokerUnavailable
from shared.events import OutgoingEvent, TopicRegistry, encode
from shared.events.partitioning import partition_for


class KafkaPublisher:
    """Publishes `OutgoingEvent`s on their physical topics, keyed by the envelope's key.

    `publish` returns once the broker acknowledged every record (acks=all): that is the "effects are
    durable" point after which a consumer may commit its input offsets.
    """

    def __init__(self, producer: AIOKafkaProducer, registry: TopicRegistry) -> None:
        self._producer = producer
        self._registry = registry

    async def publish(self, events: Sequence[OutgoingEvent]) -> None:
        if not events:
            return
        for event in events:
            _check(self._registry, event)
        try:
            pending = []
            for event in events:
                env = event.envelope
                partition = event.partition
                if partition is None:
                    # The client's default partitioner, computed here: the client's own pure-Python
                    # murmur2 cost 6 us a record, and node names (binds, placements) repeat.
                    partition = partition_for(env.key, self._registry.spec(event.topic).partitions)
                pending.append(
                    await self._producer.send(
                        self._registry.physical(event.topic),
                        value=encode(env),
                        key=env.key.encode(),
                        partition=partition,
                    )
                )
            await asyncio.gather(*pending)
        except KafkaError as exc:
            raise BrokerUnavailable(f"publishing {len(events)} event(s): {type(exc).__name__}: {exc}") from exc

    async def publish_raw(self, topic: str, value: bytes, *,
                          key: bytes | None = None, partition: int | None = None) -> None:
        """Publish bytes as they are (tests use it to plant malformed messages)."""
        try:
            await (await self._producer.send(self._registry.physical(topic), value=value, key=key, partition=partition))
        except KafkaError as exc:
            raise BrokerUnavailable(f"publishing to {topic}: {type(exc).__name__}: {exc}") from exc



def _check(registry: TopicRegistry, event: OutgoingEvent) -> None:
    """Refuse an event on the wrong topic or partition before anything is sent (a programming error)."""
    spec = registry.spec(event.topic)
    if event.envelope.type not in spec.event_names:
        raise ValueError(f"{event.envelope.type} does not belong on topic {event.topic!r}")
    if event.partition is not None and not 0 <= event.partition < spec.partitions:
        raise ValueError(f"topic {event.topic!r} has no partition {event.partition}")
