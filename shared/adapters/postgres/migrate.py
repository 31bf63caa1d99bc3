"""Alembic migrations, run programmatically (`alembic upgrade head` without the command line).

The scripts live in `migrations/` at the repository root (BERTH_MIGRATIONS_DIR overrides). The async
functions run Alembic on a connection of an async engine through `run_sync`, so they work inside a
running event loop; `env.py` uses that connection when one is handed to it.
"""

from __future__ import annotations

import os
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection

from shared.errors import ConfigurationError

from .engine import async_url, engine_scope, translated_errors

_ROOT = Path(__file__).resolve().parents[3]


def migrations_dir() -> Path:
    path = Path(os.environ.get("BERTH_MIGRATIONS_DIR") or _ROOT / "migrations")
    if not (path / "env.py").is_file():
        raise ConfigurationError(f"no Alembic migrations at {path} (set BERTH_MIGRATIONS_DIR)")
    return path


def alembic_config(database_url: str | None = None) -> Config:
    """An Alembic Config equivalent to the repository's alembic.ini, pointed at `database_url`."""
    cfg = Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    if database_url:
        cfg.set_main_option("sqlalchemy.url", async_url(database_url).replace("%", "%%"))
    return cfg


def head_revision() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None, "no migrations"
    return head


def _run(connection: Connection, cfg: Config, action: str, revision: str) -> None:
    cfg.attributes["connection"] = connection
    if action == "upgrade":
        command.upgrade(cfg, revision)
    else:
        command.downgrade(cfg, revision)


async def upgrade(database_url: str, revision: str = "head") -> None:
    """`alembic upgrade <revision>` against `database_url`."""
    cfg = alembic_config(database_url)
    with translated_errors("migrating the database"):
        async with engine_scope(database_url, pool_size=1) as engine, engine.begin() as conn:
            await conn.run_sync(_run, cfg, "upgrade", revision)


async def downgrade(database_url: str, revision: str = "base") -> None:
    """`alembic downgrade <revision>` against `database_url`."""
    cfg = alembic_config(database_url)
    async with engine_scope(database_url, pool_size=1) as engine, engine.begin() as conn:
        await conn.run_sync(_run, cfg, "downgrade", revision)


async def current_revision(database_url: str) -> str | None:
    async with engine_scope(database_url, pool_size=1) as engine, engine.connect() as conn:
        return await conn.run_sync(lambda c: MigrationContext.configure(c).get_current_revision())
