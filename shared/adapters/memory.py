"""In-memory implementations of the ports, for unit tests and the in-process simulator.

They follow the same contracts as the Kafka and Postgres adapters (tests/contract/ checks both), so a
handler tested against them behaves the same in the services.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterable, Sequence
from datetime import datetime

from shared.events import OutgoingEvent, ReceivedEvent, TopicRegistry
from shared.ports import ApplyResult, TopicPartition
from shared.projection import ReadModel, apply


class MemoryPublisher:
    """Records what was published, in order; `wait_for(n)` waits until n events arrived."""

    def __init__(self) -> None:
        self.published: list[OutgoingEvent] = []
        self._changed = asyncio.Event()

    async def publish(self, events: Sequence[OutgoingEvent]) -> None:
        registry = TopicRegistry()
        for event in events:
            spec = registry.spec(event.topic)
            if event.envelope.type not in spec.event_names:
                raise ValueError(f"{event.envelope.type} does not belong on topic {event.topic!r}")
            if event.partition is not None and not 0 <= event.partition < spec.partitions:
                raise ValueError(f"topic {event.topic!r} has no partition {event.partition}")
        self.published.extend(events)
        self._changed.set()

    def on(self, topic: str) -> list[OutgoingEvent]:
        return [e for e in self.published if e.topic == topic]

    async def wait_for(self, count: int) -> list[OutgoingEvent]:
        while len(self.published) < count:
            self._changed.clear()
            await self._changed.wait()
        return self.published


class MemoryProjectionStore:
    """The ProjectionStore contract over plain dicts: an event log, positions and a ReadModel."""

    def __init__(self) -> None:
        self.events: list[ReceivedEvent] = []
        self._ids: set[uuid.UUID] = set()
        self._positions: dict[tuple[str, str, int], int] = {}
        self.model = ReadModel()

    async def positions(self, group: str, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        found = {}
        for topic, partition in partitions:
            offset = self._positions.get((group, topic, partition))
            if offset is not None:
                found[(topic, partition)] = offset
        return found

    async def apply(self, group: str, batch: Sequence[ReceivedEvent]) -> ApplyResult:
        applied = duplicates = stale = 0
        for event in batch:
            pos = event.position
            key = (group, pos.topic, pos.partition)
            if pos.offset < self._positions.get(key, 0):
                stale += 1
                continue
            self._positions[key] = pos.offset + 1
            if event.envelope.event_id in self._ids:
                duplicates += 1
                continue
            self._ids.add(event.envelope.event_id)
            self.events.append(event)
            apply(self.model, event.envelope)
            applied += 1
        return ApplyResult(applied=applied, duplicates=duplicates, stale=stale)

    async def load(self) -> ReadModel:
        return ReadModel(
            nodes=dict(self.model.nodes), pods=dict(self.model.pods), attempts=dict(self.model.attempts),
            bindings=dict(self.model.bindings), preemptions=dict(self.model.preemptions),
        )

    async def read(
        self, *, after: int = 0, since: datetime | None = None, until: datetime | None = None
    ) -> AsyncIterator[tuple[int, ReceivedEvent]]:
        for seq, event in enumerate(self.events, start=1):
            ts = event.envelope.timestamp
            if seq <= after or (since and ts < since) or (until and ts > until):
                continue
            yield seq, event
