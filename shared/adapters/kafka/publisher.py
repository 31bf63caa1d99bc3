"""The Kafka `Publisher`: encodes envelopes with the wire codec and waits until all are acknowledged."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError, MessageSizeTooLargeError

from shared.errors import BrokerUnavailable
from shared.events import OutgoingEvent, TopicRegistry, encode
from shared.events.partitioning import partition_for

if TYPE_CHECKING:
    from aiokafka.producer.message_accumulator import BatchBuilder  # what `create_batch` returns


class KafkaPublisher:
    """Publishes `OutgoingEvent`s on their physical topics, keyed by the envelope's key.

    `publish` returns once the broker acknowledged every record (acks=all): that is the "effects are
    durable" point after which a consumer may commit its input offsets.
    """

    def __init__(self, producer: AIOKafkaProducer, registry: TopicRegistry, *,
                 max_record_bytes: int | None = None) -> None:
        self._producer = producer
        self._max_record_bytes = max_record_bytes
        """Records above this many bytes are refused before anything is sent, as the client's own
        per-record path refused those above its request size (None: the broker judges)."""
        self._registry = registry

    async def publish(self, events: Sequence[OutgoingEvent]) -> None:
        if not events:
            return
        for event in events:
            _check(self._registry, event)
        try:
            # One record batch per partition, each submitted whole: the client's per-record path
            # (a future and an accumulator lookup per record) cost as much as encoding the record.
            batches: dict[tuple[str, int], BatchBuilder] = {}
            delivered = []
            for event in events:
                env = event.envelope
                partition = event.partition
                if partition is None:
                    # The client's default partitioner, computed here: the client's own pure-Python
                    # murmur2 cost 6 us a record, and node names (binds, placements) repeat.
                    partition = partition_for(env.key, self._registry.spec(event.topic).partitions)
                topic = self._registry.physical(event.topic)
                value, key = encode(env), env.key.encode()
                if self._max_record_bytes is not None and len(value) + len(key) > self._max_record_bytes:
                    raise MessageSizeTooLargeError(f"{env.type} {env.key!r} is {len(value) + len(key)} bytes")
                batch = batches.get((topic, partition))
                if batch is None or batch.append(key=key, value=value, timestamp=None) is None:
                    if batch is not None:  # full: submitted, and the record starts the next one
                        delivered.append(await self._producer.send_batch(batch, topic, partition=partition))
                    batch = batches[(topic, partition)] = self._producer.create_batch()
                    batch.append(key=key, value=value, timestamp=None)  # a batch's first record always fits
            for (topic, partition), batch in batches.items():
                delivered.append(await self._producer.send_batch(batch, topic, partition=partition))
            await asyncio.gather(*delivered)
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
