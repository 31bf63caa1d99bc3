"""The envelope every message travels in (ARCHITECTURE §3), and the plain values services pass around.

A handler never sees a Kafka type: it gets `ReceivedEvent` (envelope + where it was read) and returns
`OutgoingEvent`s (envelope + logical topic, and a partition only for broadcasts).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import msgspec

from .catalogue import AnyEvent
from .ids import random_id

SCHEMA_VERSION = 2
"""The envelope/payload schema this build writes; readers accept this version and older.
2: shard answers may be packed (PodShardResult.feasible_at, score_runs; NodeFailure.at)."""


class Envelope(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One event with its metadata (untracked by the garbage collector, as its payload is).

    - `event_id`: unique per event; consumers deduplicate on it.
    - `type`: the payload's type name (its tag), readable without decoding the payload.
    - `key`: the Kafka key the event is published under.
    - `causation_id`: the event whose handling produced this one.
    - `correlation_id`: groups the events of one pod scheduling attempt.
    """

    event_id: uuid.UUID
    type: str
    key: str
    timestamp: datetime
    producer: str
    payload: AnyEvent
    causation_id: uuid.UUID | None = None
    correlation_id: str | None = None
    schema_version: int = SCHEMA_VERSION


def derived_id(cause: uuid.UUID, *parts: str | int) -> uuid.UUID:
    """A deterministic event id for an event produced while handling `cause`.

    Handling the same input twice (after a crash before the offset commit) then republishes the same
    ids, which downstream consumers drop as duplicates.
    """
    return uuid.uuid5(cause, "/".join(str(p) for p in parts))


def envelope(
    payload: AnyEvent,
    *,
    producer: str,
    caused_by: Envelope | None = None,
    correlation_id: str | None = None,
    event_id: uuid.UUID | None = None,
    timestamp: datetime | None = None,
    key: str | None = None,
) -> Envelope:
    """Wrap `payload`; the key defaults to the payload's partition key, the correlation id to the cause's.

    The id defaults to a random UUID and the timestamp to now; pass both for a reproducible envelope.
    """
    if timestamp is None:
        timestamp = datetime.now(UTC)
    elif timestamp.tzinfo is None:
        raise ValueError("envelope timestamps must be timezone-aware")
    return Envelope(
        event_id=event_id or random_id(),
        type=type(payload).__name__,
        key=payload.partition_key() if key is None else key,
        timestamp=timestamp,
        producer=producer,
        payload=payload,
        causation_id=caused_by.event_id if caused_by else None,
        correlation_id=(correlation_id if correlation_id is not None
                        else caused_by.correlation_id if caused_by else None),
    )


class Position(msgspec.Struct, frozen=True):
    """Where an event was read: logical topic name, partition, offset."""

    topic: str
    partition: int
    offset: int


class ReceivedEvent(msgspec.Struct, frozen=True):
    """A decoded event and the position it was read from."""

    envelope: Envelope
    position: Position

    @property
    def payload(self) -> AnyEvent:
        return self.envelope.payload


class OutgoingEvent(msgspec.Struct, frozen=True):
    """An event to publish to logical `topic`; `partition` is set only to address one shard explicitly."""

    topic: str
    envelope: Envelope
    partition: int | None = None


def broadcast(topic: str, env: Envelope, partitions: int) -> list[OutgoingEvent]:
    """One copy of `env` for every partition of a broadcast topic (filter-requests: one per shard).

    The copies share the event id: consumers deduplicate per (topic, partition, event id), and the
    event store keeps the event once.
    """
    return [OutgoingEvent(topic, env, partition=p) for p in range(partitions)]
