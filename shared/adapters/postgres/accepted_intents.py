"""The gateway's accepted intents (`accepted_intents`): written before each reply, read back when a
lost log is rebuilt (`shared.adapters.log_restore`)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from sqlalchemy import Table, delete, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncEngine

from shared.events import Envelope, OutgoingEvent, payload_from_builtins, payload_to_builtins

from .engine import translated_errors
from .models import AcceptedIntent, StoredEvent

_intents: Table = AcceptedIntent.__table__
_events: Table = StoredEvent.__table__


PRUNE_EVERY_S = 60.0
"""How often `pending_pods` first drops the intents the event store holds: the table then holds
about this long's intents, not every pod ever created (each creation reads it)."""


class AcceptedIntents:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._pruned_at = float("-inf")

    async def record(self, events: Sequence[OutgoingEvent]) -> None:
        """Keep `events` (already acknowledged by the broker); one already kept is left as it is."""
        if not events:
            return
        rows = [{"event_id": e.envelope.event_id, "topic": e.topic, "type": e.envelope.type, "key": e.envelope.key,
                 "timestamp": e.envelope.timestamp, "producer": e.envelope.producer,
                 "schema_version": e.envelope.schema_version, "payload": payload_to_builtins(e.envelope.payload)}
                for e in events]
        with translated_errors("recording accepted intents"):
            async with self._engine.begin() as conn:
                await conn.execute(insert(_intents).values(rows).on_conflict_do_nothing(index_elements=["event_id"]))

    async def unstored(self) -> list[OutgoingEvent]:
        """The intents the event store does not hold, in the order they were accepted."""
        stmt = (select(_intents).where(~select(_events.c.event_id).where(_events.c.event_id == _intents.c.event_id)
                                       .exists()).order_by(_intents.c.seq))
        with translated_errors("reading accepted intents"):
            async with self._engine.connect() as conn:
                rows = (await conn.execute(stmt)).all()
        return [OutgoingEvent(row.topic, Envelope(
            event_id=row.event_id, type=row.type, key=row.key, timestamp=row.timestamp, producer=row.producer,
            payload=payload_from_builtins(row.payload, type_name=row.type), schema_version=row.schema_version))
            for row in rows]

    async def pending_pods(self) -> set[tuple[str, str]]:
        """(namespace, name) of the pods accepted but not stored yet: a client that retries an
        apply whose reply it lost must not get the pod submitted a second time."""
        if time.monotonic() - self._pruned_at >= PRUNE_EVERY_S:
            self._pruned_at = time.monotonic()  # first: creations meanwhile do not prune too
            await self.forget_stored()
        meta = _intents.c.payload["pod"]["metadata"]
        stmt = (select(meta["namespace"].astext, meta["name"].astext)
                .where(_intents.c.type == "PodSubmitted",
                       ~select(_events.c.event_id).where(_events.c.event_id == _intents.c.event_id).exists()))
        with translated_errors("reading accepted intents"):
            async with self._engine.connect() as conn:
                return {(ns or "default", name) for ns, name in (await conn.execute(stmt)).all()}

    async def forget_stored(self) -> int:
        """Drop the intents the event store holds (they need no second chance); how many."""
        stmt = delete(_intents).where(select(_events.c.event_id).where(_events.c.event_id == _intents.c.event_id)
                                      .exists())
        with translated_errors("pruning accepted intents"):
            async with self._engine.begin() as conn:
                return (await conn.execute(stmt)).rowcount or 0
