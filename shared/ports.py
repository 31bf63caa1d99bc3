"""The seams between Berth's pure core and its I/O: Protocols the adapters implement.

- `Publisher`: puts events on topics (Kafka in services, a list in tests).
- `EventSource`: reads stored history back in order (the Postgres event store; replay uses it).
- `ProjectionStore`: applies events to the read model exactly once per consumer group, keeping the
  group's positions in the same transaction.

Each has an in-memory implementation in `shared.adapters.memory` and a real one under
`shared.adapters`; `tests/contract/` runs one suite against both.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from shared.events import OutgoingEvent, ReceivedEvent
from shared.projection import ReadModel

TopicPartition = tuple[str, int]
"""(logical topic, partition)."""


@runtime_checkable
class Publisher(Protocol):
    async def publish(self, events: Sequence[OutgoingEvent]) -> None:
        """Publish `events` in order; when this returns, every one of them is durable on the broker.

        Raises a retriable `BrokerUnavailable` when that cannot be promised; some events may then
        have been published already, which consumers tolerate (at-least-once).
        """
        ...


@runtime_checkable
class EventSource(Protocol):
    def read(
        self, *, after: int = 0, since: datetime | None = None, until: datetime | None = None
    ) -> AsyncIterator[tuple[int, ReceivedEvent]]:
        """Stored events in the order they were stored, as (sequence number, event).

        `after` skips sequence numbers up to and including it; `since`/`until` bound event timestamps.
        """
        ...


@dataclass(frozen=True, slots=True)
class ApplyResult:
    """What `ProjectionStore.apply` did with a batch."""

    applied: int = 0
    """Events applied to the read model (first time seen)."""
    duplicates: int = 0
    """Events whose id was already stored (published twice); skipped."""
    stale: int = 0
    """Events below the group's stored position (redelivered); skipped."""


@runtime_checkable
class ProjectionStore(Protocol):
    async def positions(self, group: str, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The next offset to read for each partition the group has applied anything from."""
        ...

    async def apply(self, group: str, batch: Sequence[ReceivedEvent]) -> ApplyResult:
        """Store and apply `batch` and advance the group's positions, atomically.

        Events below the stored position or with an already stored event id change nothing, so a
        redelivered batch is harmless.
        """
        ...

    async def load(self) -> ReadModel:
        """The whole read model."""
        ...
