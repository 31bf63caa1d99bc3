"""Postgres: SQLAlchemy models, engines, the event store and the projection store. Migrations are
`shared.adapters.postgres.migrate`, imported by what runs them only: alembic is a tenth of a
second of every service's start."""

from .accepted_intents import AcceptedIntents
from .engine import async_url, engine_scope, make_engine, make_sessionmaker, plain_url, translated_errors
from .event_store import PostgresEventStore
from .models import Base
from .projection_store import PostgresProjectionStore
from .queries import ReadModelQueries

__all__ = [
    "AcceptedIntents",
    "Base",
    "PostgresEventStore",
    "PostgresProjectionStore",
    "ReadModelQueries",
    "async_url",
    "engine_scope",
    "make_engine",
    "make_sessionmaker",
    "plain_url",
    "translated_errors",
]
