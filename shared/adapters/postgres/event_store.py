"""The append-only event store: every event once (unique event id), its payload as the JSON
text written.

Events are appended by the projector inside its transaction (`batch_sql.APPEND_EVENTS`);
`PostgresEventStore.read` streams them back in storage order (the `seq` identity), which is the
order they were applied to the read model.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Table, Text, and_, any_, case, cast, func, literal, or_, select
from sqlalchemy.dialects.postgresql import ARRAY, UUID
from sqlalchemy.ext.asyncio import AsyncEngine

from shared.events import Envelope, Position, ReceivedEvent, payload_from_builtins

from .engine import translated_errors
from .models import StoredEvent

events_table: Table = StoredEvent.__table__


def from_record(row: Any) -> ReceivedEvent:
    """A stored row back to the event (raises DecodeError when the payload no longer decodes)."""
    envelope = Envelope(
        event_id=row.event_id,
        type=row.type,
        key=row.key,
        timestamp=row.timestamp,
        producer=row.producer,
        payload=payload_from_builtins(row.payload, type_name=row.type),
        causation_id=row.causation_id,
        correlation_id=row.correlation_id,
        schema_version=row.schema_version,
    )
    return ReceivedEvent(envelope, Position(row.topic, row.partition, row.offset))


class PostgresEventStore:
    """Reads the event store back (an `EventSource`)."""

    def __init__(self, engine: AsyncEngine, *, page_size: int = 1000) -> None:
        self._engine = engine
        self._page = page_size

    async def count(self) -> int:
        async with self._engine.connect() as conn:
            return int((await conn.execute(select(func.count()).select_from(events_table))).scalar_one())

    async def read(
        self, *, after: int = 0, since: datetime | None = None, until: datetime | None = None
    ) -> AsyncIterator[tuple[int, ReceivedEvent]]:
        last = after
        while True:
            stmt = select(events_table).where(events_table.c.seq > last)
            if since is not None:
                stmt = stmt.where(events_table.c.timestamp >= since)
            if until is not None:
                stmt = stmt.where(events_table.c.timestamp <= until)
            stmt = stmt.order_by(events_table.c.seq).limit(self._page)
            with translated_errors("reading the event store"):
                async with self._engine.connect() as conn:
                    rows = (await conn.execute(stmt)).all()
            for row in rows:
                yield row.seq, from_record(row)
            if len(rows) < self._page:
                return
            last = rows[-1].seq

    async def last_seq(self) -> int:
        async with self._engine.connect() as conn:
            return int((await conn.execute(select(func.coalesce(func.max(events_table.c.seq), 0)))).scalar_one())

    async def page(self, *, after: int = 0, limit: int = 500, topics: Sequence[str] = (),
                   types: Sequence[str] = (), pod_uid: str | None = None) -> list[tuple[int, ReceivedEvent]]:
        """Up to `limit` events after `seq`, in storage order, narrowed to topics, event types, or
        the events about one pod (keyed by it, or naming it as pod, victim's or preemptor's uid)."""
        c = events_table.c
        stmt = select(events_table).where(c.seq > after)
        if topics:
            stmt = stmt.where(c.topic.in_(list(topics)))
        if types:
            stmt = stmt.where(c.type.in_(list(types)))
        if pod_uid is not None:
            # A payload is stored as text (json): looking for the uid in the text first spares
            # parsing every payload that cannot name it.
            named = or_(c.payload["pod_uid"].astext == pod_uid, c.payload["uid"].astext == pod_uid,
                        c.payload["preemptor_uid"].astext == pod_uid)
            stmt = stmt.where(or_(c.key == pod_uid, and_(func.strpos(cast(c.payload, Text), pod_uid) > 0, named)))
        with translated_errors("reading the event store"):
            async with self._engine.connect() as conn:
                rows = (await conn.execute(stmt.order_by(c.seq).limit(limit))).all()
        return [(row.seq, from_record(row)) for row in rows]

    async def changes(self, *, after: int, limit: int, types: Sequence[str]) -> list[tuple[int, str, Any]]:
        """Every stored event's seq after `after` (a watch must see the gaps a transaction still open
        leaves), with its type, and its payload when its type is one of `types` (else None)."""
        c = events_table.c
        payload = case((c.type.in_(list(types)), c.payload), else_=None)
        stmt = select(c.seq, c.type, payload).where(c.seq > after).order_by(c.seq).limit(limit)
        with translated_errors("reading the event store"):
            async with self._engine.connect() as conn:
                return [(r[0], r[1], r[2]) for r in (await conn.execute(stmt)).all()]

    async def live_keys(self, *, at: int, created: Sequence[str], deleted: Sequence[str]) -> set[str]:
        """The keys whose latest `created`/`deleted` event up to seq `at` is a creation: the objects
        that existed then (pods are keyed by uid, nodes by name)."""
        c = events_table.c
        last_created = func.max(case((c.type.in_(list(created)), c.seq), else_=0))
        last_deleted = func.max(case((c.type.in_(list(deleted)), c.seq), else_=0))
        stmt = (select(c.key).where(c.seq <= at, c.type.in_([*created, *deleted])).group_by(c.key)
                .having(last_created > last_deleted))
        with translated_errors("reading the event store"):
            async with self._engine.connect() as conn:
                return {r[0] for r in (await conn.execute(stmt)).all()}

    async def created_at(self, keys: Sequence[str], created: Sequence[str]) -> dict[str, int]:
        """The seq of each key's first `created` event (keys without one stored are left out)."""
        c = events_table.c
        stmt = (select(c.key, func.min(c.seq)).where(c.key.in_(list(keys)), c.type.in_(list(created)))
                .group_by(c.key))
        with translated_errors("reading the event store"):
            async with self._engine.connect() as conn:
                return {r[0]: int(r[1]) for r in (await conn.execute(stmt)).all()}

    async def holding(self, event_ids: Sequence[Any]) -> set[Any]:
        """Those of `event_ids` that are stored (one query however many are asked about)."""
        if not event_ids:
            return set()
        # One array parameter (`= ANY`), not a parameter each: a bulk apply asks about thousands.
        ids = literal(list(event_ids), ARRAY(UUID(as_uuid=True)))
        stmt = select(events_table.c.event_id).where(events_table.c.event_id == any_(ids))
        with translated_errors("reading the event store"):
            async with self._engine.connect() as conn:
                return set((await conn.execute(stmt)).scalars())

    async def versions(self, keys: Sequence[str] | None, types: Sequence[str]) -> dict[str, int]:
        """Each key's latest seq among events of `types` (every key's when `keys` is None; keys
        without such an event are left out)."""
        c = events_table.c
        stmt = select(c.key, func.max(c.seq)).where(c.type.in_(list(types)))
        if keys is not None:
            stmt = stmt.where(c.key.in_(list(keys)))
        stmt = stmt.group_by(c.key)
        with translated_errors("reading the event store"):
            async with self._engine.connect() as conn:
                return {r[0]: int(r[1]) for r in (await conn.execute(stmt)).all()}

    async def all(self) -> list[ReceivedEvent]:
        return [event async for _, event in self.read()]
