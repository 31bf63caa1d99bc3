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

import asyncpg
import msgspec
from sqlalchemy import Table, delete, func, select, tuple_
from sqlalchemy.ext.asyncio import AsyncEngine

from shared.events import ReceivedEvent
from shared.ports import ApplyResult, TopicPartition
from shared.projection import (
    AttemptRow,
    BindingRow,
    NamespaceRow,
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

from . import batch_sql as sql
from .engine import translated_errors
from .models import READ_MODEL_TABLES, ConsumerOffset

_ROW_TYPES: dict[str, type[Row]] = {
    "nodes": NodeRow, "pods": PodRow, "attempts": AttemptRow, "bindings": BindingRow, "preemptions": PreemptionRow,
    "priority_classes": PriorityClassRow, "pdbs": PdbRow, "namespaces": NamespaceRow,
}


def check_columns(columns: Iterable[str], fields: Iterable[str], what: str) -> None:
    """`json(b)_populate_recordset` drops keys that are not columns: a field added without its
    migration would be lost without a word, so the two must match."""
    if set(fields) != set(columns):
        raise RuntimeError(f"{what}'s fields {sorted(fields)} do not match its table's columns {sorted(columns)}")


for _name, _row_type in _ROW_TYPES.items():
    check_columns(sql.TABLES[_name].columns, _row_type.__struct_fields__, _row_type.__name__)

_ROW_DECODERS: dict[str, msgspec.json.Decoder[list[Row]]] = {
    name: msgspec.json.Decoder(list[row_type])  # type: ignore[valid-type]  # list of each table's row type
    for name, row_type in _ROW_TYPES.items()
}
_json = msgspec.json.Encoder()
_offsets: Table = ConsumerOffset.__table__


def _table(name: TableName) -> Table:
    return READ_MODEL_TABLES[name].__table__


def _lock_id(*parts: object) -> int:
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


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
            async with self._engine.connect() as pooled:
                raw = await pooled.get_raw_connection()
                conn: asyncpg.Connection = raw.driver_connection
                try:
                    async with conn.transaction():
                        return await _apply(conn, group, batch)
                except BaseException:
                    # The pool's own reset knows nothing of this transaction: a connection that broke,
                    # or whose rollback was cut short (a cancel), must not be handed out again.
                    if conn.is_closed() or conn.is_in_transaction():
                        raw.invalidate()
                    raise

    async def load(self) -> ReadModel:
        model = ReadModel()
        with translated_errors("loading the read model"):
            async with self._engine.connect() as conn:
                for name in READ_MODEL_TABLES:
                    rows = (await conn.execute(select(_table(name)))).all()
                    table = model.table(name)
                    pk = [c.name for c in _table(name).primary_key.columns]
                    for record in rows:
                        values = tuple(getattr(record, c) for c in pk)
                        table[values if len(values) > 1 else values[0]] = record_to_row(name, record)
        return model

    async def reset_positions(self, group: str | None = None, *, topics: Sequence[str] | None = None) -> None:
        """Forget stored positions (all groups and topics by default): the broker's log was replaced."""
        stmt = delete(_offsets) if group is None else delete(_offsets).where(_offsets.c.group_id == group)
        if topics is not None:
            stmt = stmt.where(_offsets.c.topic.in_(list(topics)))
        async with self._engine.begin() as conn:
            await conn.execute(stmt)

    async def furthest_positions(self, topics: Sequence[str]) -> dict[TopicPartition, int]:
        """For each partition of `topics`: the furthest next offset any group has stored."""
        stmt = (select(_offsets.c.topic, _offsets.c.partition, func.max(_offsets.c.next_offset))
                .where(_offsets.c.topic.in_(list(topics))).group_by(_offsets.c.topic, _offsets.c.partition))
        with translated_errors("reading consumer offsets"):
            async with self._engine.connect() as conn:
                return {(r[0], r[1]): int(r[2]) for r in (await conn.execute(stmt)).all()}

    async def forget_events(self, event_ids: Sequence[uuid.UUID], rows: ReadModel, keys: set[RowKey]) -> None:
        """In one transaction: delete `event_ids` from the event store, and write the rows `keys`
        as `rows` has them (a key `rows` lacks is deleted). For events lost with a log."""
        with translated_errors("forgetting events"):
            async with self._engine.connect() as pooled:
                raw = await pooled.get_raw_connection()
                conn: asyncpg.Connection = raw.driver_connection
                async with conn.transaction():
                    await conn.execute(sql.FORGET_EVENTS, list(event_ids))
                    await _write_rows(conn, rows, keys, whole=True)


def _first_of_each_id(events: Sequence[ReceivedEvent]) -> list[ReceivedEvent]:
    seen: set[uuid.UUID] = set()
    out = []
    for e in events:
        if e.envelope.event_id not in seen:
            seen.add(e.envelope.event_id)
            out.append(e)
    return out


async def _apply(conn: asyncpg.Connection, group: str, batch: Sequence[ReceivedEvent]) -> ApplyResult:
    tps = sorted({(e.position.topic, e.position.partition) for e in batch})
    keys = {k for e in batch for k in keys_for(e.envelope)}
    lock_ids = sorted({_lock_id("offsets", group, *tp) for tp in tps} | {_lock_id(*k) for k in keys})
    await conn.fetchval(sql.LOCK, lock_ids)

    stored = await _stored_positions(conn, group, tps)
    fresh = [e for e in batch if e.position.offset >= stored.get((e.position.topic, e.position.partition), 0)]
    unique = _first_of_each_id(fresh)
    inserted = await _append_events(conn, unique)
    new = [e for e in unique if e.envelope.event_id in inserted]

    model = await load_rows(conn, {k for e in new for k in keys_for(e.envelope)})
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


class _EventRecord(msgspec.Struct):
    """An event as the events table's columns (`sql.EVENT_COLUMNS`), for `json_populate_recordset`."""

    event_id: uuid.UUID
    topic: str
    partition: int
    offset: int
    type: str
    key: str
    timestamp: datetime
    producer: str
    causation_id: uuid.UUID | None
    correlation_id: str | None
    schema_version: int
    payload: Any


check_columns(sql.EVENT_COLUMNS, _EventRecord.__struct_fields__, "_EventRecord")


def _event_record(event: ReceivedEvent) -> _EventRecord:
    env, pos = event.envelope, event.position
    return _EventRecord(env.event_id, pos.topic, pos.partition, pos.offset, env.type, env.key, env.timestamp,
                        env.producer, env.causation_id, env.correlation_id, env.schema_version, env.payload)


async def _append_events(conn: asyncpg.Connection, events: Sequence[ReceivedEvent]) -> set[uuid.UUID]:
    """Store the events not stored yet, in order; the ids actually stored (the rest were duplicates)."""
    if not events:
        return set()
    records = _json.encode([_event_record(e) for e in events]).decode()
    return {r[0] for r in await conn.fetch(sql.APPEND_EVENTS, records)}


async def _stored_positions(conn: asyncpg.Connection, group: str,
                            tps: list[TopicPartition]) -> dict[TopicPartition, int]:
    rows = await conn.fetch(sql.STORED_POSITIONS, group, [t for t, _ in tps], [p for _, p in tps])
    return {(r[0], r[1]): r[2] for r in rows}


async def _store_positions(conn: asyncpg.Connection, group: str, nexts: dict[TopicPartition, int]) -> None:
    ordered = sorted(nexts.items())
    await conn.execute(sql.STORE_POSITIONS, group, [t for (t, _), _ in ordered], [p for (_, p), _ in ordered],
                       [o for _, o in ordered])


def _by_table(keys: Iterable[RowKey]) -> dict[TableName, list[object]]:
    out: dict[TableName, list[object]] = {}
    for name, key in keys:
        out.setdefault(name, []).append(key)
    return out


def _key_arrays(name: str, keys: Sequence[object]) -> list[list[Any]]:
    """One array per key column of table `name`, from row keys (a value, or a tuple of values)."""
    width = len(sql.TABLES[name].key_columns)
    if width == 1:
        return [list(keys)]
    return [[k[i] for k in keys] for i in range(width)]  # type: ignore[index]  # a wider key is a tuple


async def load_rows(conn: asyncpg.Connection, keys: set[RowKey]) -> ReadModel:
    model = ReadModel()
    for name, wanted in _by_table(keys).items():
        statements = sql.TABLES[name]
        found = await conn.fetchval(statements.select, *_key_arrays(name, wanted))
        table = model.table(name)
        width = len(statements.key_columns)
        for row in _ROW_DECODERS[name].decode(found):
            key = tuple(getattr(row, c) for c in statements.key_columns)
            table[key if width > 1 else key[0]] = row
    return model


async def _write_rows(conn: asyncpg.Connection, model: ReadModel, changed: set[RowKey], *,
                      whole: bool = False) -> None:
    """`whole`: the rows were folded from the whole history, unread columns included."""
    for name, keys in sorted(_by_table(changed).items()):
        statements = sql.TABLES[name]
        rows = model.table(name)
        upserts = [rows[k] for k in keys if k in rows]
        gone = [k for k in keys if k not in rows]
        if upserts:
            await conn.execute(statements.replace if whole else statements.upsert, _json.encode(upserts).decode())
        if gone:
            await conn.execute(statements.delete, *_key_arrays(name, gone))
