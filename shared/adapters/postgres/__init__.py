"""Postgres: SQLAlchemy models, engines, migrations, the event store and the projection store."""

from .accepted_intents import AcceptedIntents
from .engine import async_url, engine_scope, make_engine, make_sessionmaker, plain_url, translated_errors
from .event_store import PostgresEventStore
from .migrate import current_revision, downgrade, head_revision, upgrade
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
    "current_revision",
    "downgrade",
    "engine_scope",
    "head_revision",
    "make_engine",
    "make_sessionmaker",
    "plain_url",
    "translated_errors",
    "upgrade",
]
