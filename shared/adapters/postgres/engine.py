"""Engines and sessions for Postgres (SQLAlchemy 2 async over asyncpg), and error translation."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import asyncpg
import msgspec
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

from shared.errors import ConfigurationError, DatabaseUnavailable

# SQLSTATEs worth retrying: the classes of connection exceptions, serialization failures and
# deadlocks, insufficient resources, operator intervention (shutdown, crash recovery) and system
# errors (I/O); a server that is read-only for now (a standby, until a failover promotes it); a
# lock not granted at once, or an object in use. Not retried, the input is dead-lettered.
_RETRIABLE_SQLSTATES = ("08", "40", "53", "57", "58", "25006", "55P03", "55006")


def async_url(url: str) -> str:
    """The SQLAlchemy URL for asyncpg, whatever flavour of postgres URL came in."""
    for prefix in ("postgresql+asyncpg://", "postgresql+psycopg://", "postgresql+psycopg2://",
                   "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+asyncpg://" + url[len(prefix):]
    raise ConfigurationError(f"DATABASE_URL must be a postgresql:// URL, got {make_url_safe(url)!r}")


def plain_url(url: str) -> str:
    """The libpq-style URL (postgresql://…), as asyncpg and psql take it."""
    return "postgresql://" + async_url(url)[len("postgresql+asyncpg://"):]


def make_url_safe(url: str) -> str:
    """The URL with any password hidden, for messages and logs."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except sa_exc.ArgumentError:
        return "<unparseable URL>"


def _json_dumps(value: Any) -> str:
    return msgspec.json.encode(value).decode()


def make_engine(url: str, *, pool_size: int = 5, echo: bool = False) -> AsyncEngine:
    """An async engine; JSONB goes through msgspec (fast, and it knows UUIDs and datetimes). Sessions
    run in UTC, so timestamps Postgres renders as JSON (the projector reads rows so) carry no
    server-local offset."""
    return create_async_engine(
        async_url(url),
        connect_args={"server_settings": {"TimeZone": "UTC"}},
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_pre_ping=True,
        echo=echo,
        json_serializer=_json_dumps,
        json_deserializer=msgspec.json.decode,
    )


def make_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)


def is_retriable_db_error(exc: BaseException) -> bool:
    if isinstance(exc, asyncpg.InterfaceError) and isinstance(exc, ValueError):
        return False  # a parameter the driver cannot encode (its DataError): the same next time
    if isinstance(exc, (OSError, TimeoutError, ConnectionError, asyncpg.InterfaceError)):
        return True
    if isinstance(exc, asyncpg.PostgresError):  # the driver's own, from statements run on it directly
        return str(getattr(exc, "sqlstate", "") or "").startswith(_RETRIABLE_SQLSTATES)
    if isinstance(exc, sa_exc.DBAPIError):
        if exc.connection_invalidated:
            return True
        cause = getattr(exc.orig, "__cause__", None)
        sqlstate = getattr(exc.orig, "sqlstate", None) or getattr(cause, "sqlstate", None)
        if isinstance(sqlstate, str) and sqlstate.startswith(_RETRIABLE_SQLSTATES):
            return True
        return isinstance(exc, (sa_exc.OperationalError, sa_exc.InterfaceError))
    return isinstance(exc, sa_exc.TimeoutError)  # pool exhausted


@contextlib.contextmanager
def translated_errors(what: str) -> Iterator[None]:
    """Re-raise connection-level and transient database failures as DatabaseUnavailable (retriable)."""
    try:
        yield
    except (sa_exc.SQLAlchemyError, asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError) as exc:
        if is_retriable_db_error(exc):
            raise DatabaseUnavailable(f"{what}: {type(exc).__name__}: {exc}") from exc
        raise


@contextlib.asynccontextmanager
async def engine_scope(url: str, **kwargs: Any) -> AsyncIterator[AsyncEngine]:
    """An engine disposed on exit (so tests and short commands leave no pooled connections)."""
    engine = make_engine(url, **kwargs)
    try:
        yield engine
    finally:
        await engine.dispose()
