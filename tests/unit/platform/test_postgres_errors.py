"""Which database failures the services retry, for the driver's own exceptions too (the projector
runs its transaction on asyncpg directly), and the projector's guard that every row field has
its column."""

from __future__ import annotations

import asyncpg
import msgspec
import pytest
from asyncpg.exceptions import _base as driver

from shared.adapters.postgres.batch_sql import TABLES
from shared.adapters.postgres.engine import is_retriable_db_error, translated_errors
from shared.adapters.postgres.projection_store import check_columns
from shared.errors import DatabaseUnavailable


@pytest.mark.parametrize(("exc", "retriable"), [
    (asyncpg.exceptions.ConnectionDoesNotExistError("gone"), True),
    (asyncpg.exceptions.SerializationError("conflict"), True),
    (asyncpg.exceptions.DeadlockDetectedError("deadlock"), True),
    (asyncpg.exceptions.AdminShutdownError("shutting down"), True),
    (driver.InterfaceError("connection is closed"), True),
    (asyncpg.exceptions.ReadOnlySQLTransactionError("cannot execute INSERT in a read-only transaction"), True),
    (asyncpg.exceptions.PostgresIOError("could not write to file"), True),
    (asyncpg.exceptions.LockNotAvailableError("could not obtain lock"), True),
    (asyncpg.exceptions.UniqueViolationError("duplicate"), False),
    (asyncpg.exceptions.UndefinedColumnError("no such column"), False),
    (driver.DataError("invalid input for query argument $1"), False),
])
def test_driver_failures_are_retried_where_the_next_try_may_succeed(exc: BaseException, retriable: bool) -> None:
    assert is_retriable_db_error(exc) is retriable
    raised: type[BaseException] = DatabaseUnavailable if retriable else type(exc)
    with pytest.raises(raised), translated_errors("applying"):
        raise exc


def test_a_row_field_without_its_column_is_refused_at_import() -> None:
    class Widened(msgspec.Struct):
        name: str
        node: dict[str, object]
        updated_at: str
        added: int

    with pytest.raises(RuntimeError, match="added"):
        check_columns(TABLES["nodes"].columns, Widened.__struct_fields__, "Widened")
    check_columns(TABLES["nodes"].columns, ("name", "node", "updated_at"), "NodeRow")
