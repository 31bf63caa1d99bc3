"""Alembic environment for Berth: async engine (asyncpg), URL from the config or DATABASE_URL.

When Berth runs migrations programmatically it hands over a live connection in
`config.attributes["connection"]`; the `alembic` command line builds its own engine.
"""

from __future__ import annotations

import asyncio
from logging.config import fileConfig

from alembic import context
from sqlalchemy import Connection

from shared.adapters.postgres.engine import async_url, make_engine
from shared.adapters.postgres.models import Base
from shared.errors import ConfigurationError
from shared.settings import load_settings

config = context.config
if config.config_file_name is not None and config.attributes.get("connection") is None:
    fileConfig(config.config_file_name, disable_existing_loggers=False)

target_metadata = Base.metadata


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url") or load_settings().database_url
    if not url:
        raise ConfigurationError("set DATABASE_URL (or sqlalchemy.url) to run migrations")
    return async_url(url)


def _run(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=target_metadata, compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


async def _run_online() -> None:
    engine = make_engine(_url(), pool_size=1)
    try:
        async with engine.connect() as connection:
            await connection.run_sync(_run)
            await connection.commit()
    finally:
        await engine.dispose()


if context.is_offline_mode():
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
elif (given := config.attributes.get("connection")) is not None:
    _run(given)
else:
    asyncio.run(_run_online())
