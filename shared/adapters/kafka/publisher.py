"""The Kafka `Publisher`: encodes envelopes with the wire codec and waits until all are acknowledged."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError, MessageSizeTooLargeError

from shared.errors import BrokerUnavailable, RecordTooLarge
from shared.events import OutgoingEvent, TopicRegistry, encode
from shared.events.partitioning import partition_for

BATCHED_FROM = 8
"""A partition given this many records or more by one publish gets them as whole record batches,
submitted at once: the client's per-record path (a coroutine, an accumulator lookup and a delivery
future a record) cost the queue about as much as encoding its records. Fewer go record by record,
into the batch the partition has open: a submitted batch waits until the partition's batches
before it were taken, so concurrent publishes of one record each (the gateway's) would each wait
for the one before them instead of sharing a batch."""


class KafkaPublisher:
    """Publishes `OutgoingEvent`s on their physical topics, keyed by the envelope's key.

    `publish` returns once the broker acknowledged every record (acks=all): that is the "effects are
    durable" point after which a consumer may commit its input offsets.
    """

    def __init__(self, producer: AIOKafkaProducer, registry: TopicRegistry, *,
                 max_record_bytes: int | None = None) -> None:
        self._producer = producer
        self._max_record_bytes = max_record_bytes
        """A publish with a record (key and value) above this many bytes is refused before anything
        is sent, with RecordTooLarge (None: the client refuses those of a partition's few records
        above its request size, the broker the others)."""
        self._registry = registry

    async def publish(self, events: Sequence[OutgoingEvent]) -> None:
        if not events:
            return
        for event in events:
            _check(self._registry, event)
        records: dict[tuple[str, int], list[tuple[bytes, bytes]]] = {}
        for event in events:
            env = event.envelope
            partition = event.partition
            if partition is None:
                # The client's default partitioner, computed here: the client's own pure-Python
                # murmur2 cost 6 us a record, and node names (binds, placements) repeat.
                partition = partition_for(env.key, self._registry.spec(event.topic).partitions)
            key, value = env.key.encode(), encode(env)
            if self._max_record_bytes is not None and len(key) + len(value) > self._max_record_bytes:
                raise RecordTooLarge(f"publishing {len(events)} event(s): {env.type} {env.key!r} is "
                                        f"{len(key) + len(value)} bytes, above {self._max_record_bytes}")
            records.setdefault((self._registry.physical(event.topic), partition), []).append((key, value))
        try:
            delivered = []
            for (topic, partition), those in records.items():
                if len(those) < BATCHED_FROM:
                    delivered += [await self._producer.send(topic, value=value, key=key, partition=partition)
                                  for key, value in those]
                else:
                    delivered += await self._send_batches(topic, partition, those)
            await asyncio.gather(*delivered)
        except MessageSizeTooLargeError as exc:
            raise RecordTooLarge(f"publishing {len(events)} event(s): {type(exc).__name__}: {exc}") from exc
        except KafkaError as exc:
            raise BrokerUnavailable(f"publishing {len(events)} event(s): {type(exc).__name__}: {exc}") from exc

    async def _send_batches(self, topic: str, partition: int,
                            records: list[tuple[bytes, bytes]]) -> list[asyncio.Future[Any]]:
        """`records` as whole record batches, in order: a batch is submitted once full (the next
        waits until the client took it) and the last at the end."""
        sent = []
        batch = self._producer.create_batch()
        for key, value in records:
            if batch.append(key=key, value=value, timestamp=None) is None:
                sent.append(await self._producer.send_batch(batch, topic, partition=partition))
                batch = self._producer.create_batch()
                batch.append(key=key, value=value, timestamp=None)  # a batch's first record always fits
        sent.append(await self._producer.send_batch(batch, topic, partition=partition))
        return sent

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
