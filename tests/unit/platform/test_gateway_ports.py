"""The Postgres adapters satisfy the ports the gateway is written against: mypy checks the
signatures (the functions below), the tests that an adapter has every member a port lists."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from shared.adapters.postgres import AcceptedIntents, PostgresEventStore, ReadModelQueries, make_engine
from shared.ports import AcceptedIntentLog, EventStoreReader, ReadModelReader

GATEWAY = Path(__file__).resolve().parents[3] / "services" / "gateway"


def _store(s: PostgresEventStore) -> EventStoreReader:
    return s


def _queries(q: ReadModelQueries) -> ReadModelReader:
    return q


def _intents(i: AcceptedIntents) -> AcceptedIntentLog:
    return i


@pytest.fixture
def engine() -> Iterator[AsyncEngine]:
    # Making an engine opens no connection: no database is needed.
    engine = make_engine("postgresql://berth@localhost/berth")
    yield engine
    engine.sync_engine.dispose()


def test_the_postgres_adapters_are_the_gateways_ports(engine: AsyncEngine) -> None:
    assert isinstance(_store(PostgresEventStore(engine)), EventStoreReader)
    assert isinstance(_queries(ReadModelQueries(engine)), ReadModelReader)
    assert isinstance(_intents(AcceptedIntents(engine)), AcceptedIntentLog)


@pytest.mark.parametrize("path", sorted(p for p in GATEWAY.rglob("*.py") if p.name != "app.py"),
                         ids=lambda p: str(p.relative_to(GATEWAY)))
def test_only_the_composition_root_names_postgres(path: Path) -> None:
    imported: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
        elif isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
    assert not {m for m in imported if m.startswith("shared.adapters.postgres")}
