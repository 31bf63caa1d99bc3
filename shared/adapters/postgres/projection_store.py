"""The read model in Postgres, applied exactly once per consumer group.

`apply(group, batch)` runs one transaction that
1. locks the batch's partitions and rows (advisory locks in a fixed order, so two projector replicas
   overlapping during a rebalance serialize instead of losing updates),
2. drops events below the group's stored position (a redelivery after a crash between the database
   commit and the Kafka offset commit),
3. appends the rest to the event store, skipping ids already stored (an event published twice),
4. loads the rows the new events touch, applies `shared.projection.apply` (the same fold replay
   uses), writes the changed rows back,
5. stores the group's next offsets.
Either all of it commits or none of it does.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import msgspec
from sqlalchemy import Table, and_, bindparam, delete, literal_column, or_, select, text, tuple_
from sqlalchemy.dialects.postgresql import ARRAY, BIGINT, insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from shared.events import ReceivedEvent
from shared.ports import ApplyResult, TopicPartition
from shared.projection import (
    AttemptRow,
    BindingRow,
    NodeRow,
    PdbRow,
    PodRow,
    PreemptionRow,
    PriorityClassRow,
    ReadModel,
    Row,
    RowKey,
    TableName,
    apply,
    keys_for,
)

from . import event_store
from .engine import translated_errors
from .models import READ_MODEL_TABLES, ConsumerOffset

_ROW_TYPES: dict[str, type[Row]] = {
    "nodes": NodeRow, "pods": PodRow, "attempts": AttemptRow, "bindings": BindingRow, "preemptions": PreemptionRow,
    "priority_classes": PriorityClassRow, "pdbs": PdbRow,
}
_offsets: Table = ConsumerOffset.__table__  # type: ignore[assignment]
_lock_all = text(
    "SELECT count(*) FROM (SELECT pg_advisory_xact_lock(k) FROM unnest(:keys) AS k) AS locked"
).bindparams(bindparam("keys", type_=ARRAY(BIGINT)))


def _table(name: str) -> Table:
    return READ_MODEL_TABLES[name].__table__  # type: ignore[return-value]


def _pk_values(name: str, key: object) -> tuple[Any, ...]:
    return key if isinstance(key, tuple) else (key,)


def _lock_id(*parts: object) -> int:
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def row_to_record(row: Row) -> dict[str, Any]:
    data: dict[str, Any] = msgspec.to_builtins(row, builtin_types=(datetime, uuid.UUID))
    return data


def record_to_row(name: str, record: Any) -> Row:
    return msgspec.convert(dict(record._mapping), _ROW_TYPES[name])


class PostgresProjectionStore:
    """A `ProjectionStore` on Postgres."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def positions(self, group: str, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        wanted = list(partitions)
        if not wanted:
            return {}
        stmt = select(_offsets.c.topic, _offsets.c.partition, _offsets.c.next_offset).where(
            _offsets.c.group_id == group, tuple_(_offsets.c.topic, _offsets.c.partition).in_(wanted)
        )
        with translated_errors("reading consumer offsets"):
            async with self._engine.connect() as conn:
                rows = (await conn.execute(stmt)).all()
        return {(r.topic, r.partition): r.next_offset for r in rows}

    async def apply(self, group: str, batch: Sequence[ReceivedEvent]) -> ApplyResult:
        if not batch:
            return ApplyResult()
        with translated_errors("applying events to the projection"):
            async with self._engine.begin() as conn:
                return await self._apply(conn, group, batch)

    async def _apply(self, conn: AsyncConnection, group: str, batch: Sequence[ReceivedEvent]) -> ApplyResult:
        tps = sorted({(e.position.topic, e.position.partition) for e in batch})
        keys = {k for e in batch for k in keys_for(e.envelope)}
        lock_ids = sorted({_lock_id("offsets", group, *tp) for tp in tps} | {_lock_id(*k) for k in keys})
        await conn.execute(_lock_all, {"keys": lock_ids})

        stored = await _stored_positions(conn, group, tps)
        fresh = [e for e in batch if e.position.offset >= stored.get((e.position.topic, e.position.partition), 0)]
        inserted = await event_store.append(conn, _first_of_each_id(fresh))
        new = [e for e in _first_of_each_id(fresh) if e.envelope.event_id in inserted]

        model = await _load_rows(conn, {k for e in new for k in keys_for(e.envelope)})
        changed: set[RowKey] = set()
        for event in new:
            changed |= apply(model, event.envelope)
        await _write_rows(conn, model, changed)

        if fresh:
            nexts: dict[TopicPartition, int] = {}
            for e in fresh:
                tp = (e.position.topic, e.position.partition)
                nexts[tp] = max(nexts.get(tp, 0), e.position.offset + 1)
            await _store_positions(conn, group, nexts)
        return ApplyResult(applied=len(new), duplicates=len(fresh) - len(new), stale=len(batch) - len(fresh))

    async def load(self) -> ReadModel:
        model = ReadModel()
        with translated_errors("loading the read model"):
            async with self._engine.connect() as conn:
                for name in READ_MODEL_TABLES:
                    rows = (await conn.execute(select(_table(name)))).all()
                    table = model.table(name)  # type: ignore[arg-type]
                    pk = [c.name for c in _table(name).primary_key.columns]
                    for record in rows:
                        values = tuple(getattr(record, c) for c in pk)
                        table[values if len(values) > 1 else values[0]] = record_to_row(name, record)
        return model

    async def reset_positions(self, group: str | None = None) -> None:
        """Forget stored positions (all groups by default): the broker's log was replaced."""
        stmt = delete(_offsets) if group is None else delete(_offsets).where(_offsets.c.group_id == group)
        async with self._engine.begin() as conn:
            await conn.execute(stmt)


def _first_of_each_id(events: Sequence[ReceivedEvent]) -> list[ReceivedEvent]:
    seen: set[uuid.UUID] = set()
    out = []
    for e in events:
        if e.envelope.event_id not in seen:
            seen.add(e.envelope.event_id)
            out.append(e)
    return out


async def _stored_positions(conn: AsyncConnection, group: str, tps: list[TopicPartition]) -> dict[TopicPartition, int]:
    stmt = select(_offsets.c.topic, _offsets.c.partition, _offsets.c.next_offset).where(
        _offsets.c.group_id == group, tuple_(_offsets.c.topic, _offsets.c.partition).in_(tps)
    )
    return {(r.topic, r.partition): r.next_offset for r in (await conn.execute(stmt)).all()}


def _upsert(table: Table, extra: dict[str, Any] | None = None) -> Any:
    """INSERT … ON CONFLICT (primary key) DO UPDATE every other column; executed with many rows."""
    stmt = insert(table)
    keys = [c.name for c in table.primary_key.columns]
    values = {c.name: stmt.excluded[c.name] for c in table.columns if not c.primary_key and c.name not in (extra or {})}
    return stmt.on_conflict_do_update(index_elements=keys, set_={**values, **(extra or {})})


_UPSERT_OFFSETS = _upsert(_offsets, {"updated_at": literal_column("now()")})
_UPSERTS = {name: _upsert(_table(name)) for name in READ_MODEL_TABLES}


async def _store_positions(conn: AsyncConnection, group: str, nexts: dict[TopicPartition, int]) -> None:
    rows = [{"group_id": group, "topic": t, "partition": p, "next_offset": o} for (t, p), o in sorted(nexts.items())]
    await conn.execute(_UPSERT_OFFSETS, rows)


async def _load_rows(conn: AsyncConnection, keys: set[RowKey]) -> ReadModel:
    model = ReadModel()
    by_table: dict[TableName, list[object]] = {}
    for name, key in keys:
        by_table.setdefault(name, []).append(key)
    for name, wanted in by_table.items():
        table = _table(name)
        pk = list(table.primary_key.columns)
        values = [_pk_values(name, k) for k in wanted]
        cond = tuple_(*pk).in_(values) if len(pk) > 1 else pk[0].in_([v[0] for v in values])
        for record in (await conn.execute(select(table).where(cond))).all():
            row = record_to_row(name, record)
            key = tuple(getattr(record, c.name) for c in pk)
            model.table(name)[key if len(key) > 1 else key[0]] = row  # type: ignore[arg-type]
    return model


async def _write_rows(conn: AsyncConnection, model: ReadModel, changed: set[RowKey]) -> None:
    by_table: dict[TableName, list[object]] = {}
    for name, key in changed:
        by_table.setdefault(name, []).append(key)
    for name, keys in sorted(by_table.items()):
        table = _table(name)
        pk = list(table.primary_key.columns)
        rows = model.table(name)
        upserts = [row_to_record(rows[k]) for k in keys if k in rows]
        gone = [_pk_values(name, k) for k in keys if k not in rows]
        if upserts:
            await conn.execute(_UPSERTS[name], upserts)
        if gone:
            cond = or_(*(and_(*(c == v for c, v in zip(pk, values, strict=True))) for values in gone))
            await conn.execute(delete(table).where(cond))
