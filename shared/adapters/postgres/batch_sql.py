"""The projector's statements, one fixed text each, so that a connection prepares each once.

A batch's rows travel as one JSON array per table (msgspec encodes the row structs in one call;
`jsonb_populate_recordset` turns it into the table's own row type), and its keys as arrays: the
text never depends on how many rows a batch has. The texts are built from the SQLAlchemy models,
so a column added by a migration reaches them with the model.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from sqlalchemy import BigInteger, Integer, Table, Text
from sqlalchemy.dialects.postgresql import UUID

from .models import READ_MODEL_TABLES, ConsumerOffset, StoredEvent

_ARRAY_TYPES: tuple[tuple[type, str], ...] = ((BigInteger, "bigint[]"), (Integer, "integer[]"), (Text, "text[]"),
                                              (UUID, "uuid[]"))


def _array_type(column: object) -> str:
    for kind, name in _ARRAY_TYPES:
        if isinstance(getattr(column, "type", None), kind):
            return name
    raise TypeError(f"no array type for key column {column!r}")


def _quoted(name: str) -> str:
    return f'"{name}"'


@dataclass(frozen=True)
class TableStatements:
    """Load, upsert and delete for one read-model table, by primary key."""

    columns: tuple[str, ...]
    key_columns: tuple[str, ...]
    select: str
    """The rows whose keys are in the arrays $1.. (one per key column), as one JSON array (text);
    unread columns are null."""
    upsert: str
    """$1: a JSON array of rows (text), inserted or, on a key already present, written over (an
    unread column only with a value)."""
    replace: str
    """`upsert`, writing every column as the rows have it (rows folded from a whole history)."""
    delete: str
    """The rows whose keys are in the arrays $1.."""


def _keys_in(table: Table) -> str:
    """A condition on the key columns being among the arrays $1..: one array per key column."""
    keys = list(table.primary_key.columns)
    if len(keys) == 1:
        return f"{_quoted(keys[0].name)} = ANY($1::{_array_type(keys[0])})"
    arrays = ", ".join(f"${i}::{_array_type(c)}" for i, c in enumerate(keys, start=1))
    return f"({', '.join(_quoted(c.name) for c in keys)}) IN (SELECT * FROM unnest({arrays}))"


def table_statements(table: Table, unread: Collection[str] = ()) -> TableStatements:
    """`unread`: columns the fold writes but never reads, loaded as NULL; an upsert writes one only
    where the row carries a value, and otherwise keeps the stored one."""
    keys = tuple(c.name for c in table.primary_key.columns)
    columns = tuple(c.name for c in table.columns)

    def update(c: str, keep: Collection[str]) -> str:
        if c in keep:
            return f"{_quoted(c)} = coalesce(EXCLUDED.{_quoted(c)}, {table.name}.{_quoted(c)})"
        return f"{_quoted(c)} = EXCLUDED.{_quoted(c)}"

    def upsert(keep: Collection[str]) -> str:
        updates = ", ".join(update(c, keep) for c in columns if c not in keys)
        return (f"INSERT INTO {table.name} ({listed}) SELECT {listed} FROM "
                f"jsonb_populate_recordset(NULL::{table.name}, $1::text::jsonb) "
                f"ON CONFLICT ({', '.join(_quoted(k) for k in keys)}) DO UPDATE SET {updates}")

    listed = ", ".join(_quoted(c) for c in columns)
    loaded = ", ".join(f"NULL AS {_quoted(c)}" if c in unread else _quoted(c) for c in columns)
    return TableStatements(
        columns=columns,
        key_columns=keys,
        select=(f"SELECT coalesce(json_agg(t), '[]')::text FROM (SELECT {loaded} FROM {table.name} "
                f"WHERE {_keys_in(table)}) AS t"),
        upsert=upsert(unread),
        replace=upsert(()),
        delete=f"DELETE FROM {table.name} WHERE {_keys_in(table)}",
    )


UNREAD_COLUMNS: dict[str, tuple[str, ...]] = {"pods": ("pod",)}
"""Per table, the columns the fold writes but never reads (`PodRow.pod`: the derived columns read
`spec_node_name`). A pod's spec is most of its row: loading, decoding, encoding and writing it
back for every event about the pod was most of the projector's work on pods."""

TABLES: dict[str, TableStatements] = {
    name: table_statements(model.__table__, UNREAD_COLUMNS.get(name, ()))
    for name, model in READ_MODEL_TABLES.items()
}

LOCK = "SELECT count(*) FROM (SELECT pg_advisory_xact_lock(k) FROM unnest($1::bigint[]) AS k) AS locked"
"""Advisory locks on every id in $1, held to the end of the transaction (take them sorted)."""

_offsets: Table = ConsumerOffset.__table__
_events: Table = StoredEvent.__table__

STORED_POSITIONS = (
    f"SELECT topic, partition, next_offset FROM {_offsets.name} WHERE group_id = $1 "
    "AND (topic, partition) IN (SELECT * FROM unnest($2::text[], $3::integer[]))"
)
"""Group $1's next offsets on the (topic, partition) pairs given as arrays $2, $3."""

STORE_POSITIONS = (
    f"INSERT INTO {_offsets.name} (group_id, topic, partition, next_offset, updated_at) "
    "SELECT $1, t, p, o, now() FROM unnest($2::text[], $3::integer[], $4::bigint[]) AS u(t, p, o) "
    "ON CONFLICT (group_id, topic, partition) DO UPDATE SET next_offset = EXCLUDED.next_offset, updated_at = now()"
)

EVENT_COLUMNS: tuple[str, ...] = tuple(c.name for c in _events.columns if c.name not in ("seq", "stored_at"))
"""The events table's columns an event fills (the store numbers and stamps it)."""
APPEND_EVENTS = (
    f"INSERT INTO {_events.name} ({', '.join(map(_quoted, EVENT_COLUMNS))}) "
    f"SELECT {', '.join('r.' + _quoted(c) for c in EVENT_COLUMNS)} "
    f"FROM json_populate_recordset(NULL::{_events.name}, $1::text::json) WITH ORDINALITY AS r "
    "ORDER BY r.ordinality ON CONFLICT (event_id) DO NOTHING RETURNING event_id"
)
"""$1: a JSON array of events; stored in array order (their `seq`), those already stored skipped;
returns the ids inserted."""

FORGET_EVENTS = f"DELETE FROM {_events.name} WHERE event_id = ANY($1::uuid[])"
"""Events lost with a log ($1: their ids), taken out of the store."""
