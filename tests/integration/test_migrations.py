"""Alembic migrations on a real PostgreSQL: upgrade and downgrade cleanly, and match the models."""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Connection, inspect

from berth.stack.pgserver import create_database, drop_database
from shared.adapters.postgres import Base, engine_scope
from shared.adapters.postgres.migrate import current_revision, downgrade, head_revision, upgrade

from .backends import Backend

pytestmark = pytest.mark.integration
TABLES = {"events", "consumer_offsets", "nodes", "pods", "scheduling_attempts", "bindings", "preemptions"}


@pytest.fixture
async def empty_database(backend: Backend) -> AsyncIterator[str]:
    name = f"berth_migrate_{uuid.uuid4().hex[:10]}"
    await create_database(backend.admin_database_url, name, exist_ok=False)
    try:
        yield backend.database_url(name)
    finally:
        await drop_database(backend.admin_database_url, name)


async def _tables(url: str) -> set[str]:
    async with engine_scope(url, pool_size=1) as engine, engine.connect() as conn:
        return set(await conn.run_sync(lambda c: inspect(c).get_table_names()))


def _drift(conn: Connection) -> list[object]:
    return list(compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), Base.metadata))


async def test_upgrade_downgrade_upgrade(empty_database: str) -> None:
    assert await current_revision(empty_database) is None
    await upgrade(empty_database)
    assert await current_revision(empty_database) == head_revision()
    assert TABLES <= await _tables(empty_database)

    await downgrade(empty_database, "base")
    assert await current_revision(empty_database) is None
    assert await _tables(empty_database) == {"alembic_version"}

    await upgrade(empty_database)
    assert TABLES <= await _tables(empty_database)
    await upgrade(empty_database)  # idempotent at head


async def test_migrations_match_the_models(empty_database: str) -> None:
    await upgrade(empty_database)
    async with engine_scope(empty_database, pool_size=1) as engine, engine.connect() as conn:
        assert await conn.run_sync(_drift) == []


async def test_alembic_command_line_reads_database_url(empty_database: str) -> None:
    root = Path(__file__).resolve().parents[2]
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "alembic", "upgrade", "head", cwd=root,
        env={**os.environ, "DATABASE_URL": empty_database, "PYTHONPATH": str(root)},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, out.decode()
    assert await current_revision(empty_database) == head_revision()
