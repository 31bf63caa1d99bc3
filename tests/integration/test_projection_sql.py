"""The projector's statements on a real Postgres: events are stored in the order applied and read
back as they were, and rows read back through JSON keep their instants in UTC whatever the
database's own time zone."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from shared.adapters.postgres import PostgresEventStore, PostgresProjectionStore, make_engine
from shared.adapters.postgres.projection_store import _load_rows
from shared.events import ReceivedEvent
from shared.projection import fold, keys_for
from tests.unit.events.samples import lifecycle, received, sample_payloads

from .fixtures import BerthTestEnv

pytestmark = pytest.mark.integration

def _received() -> list[ReceivedEvent]:
    return received(lifecycle(n_pods=6) + sample_payloads())


async def test_events_are_stored_in_the_order_applied_and_read_back_whole(engine: AsyncEngine) -> None:
    events = _received()
    store = PostgresProjectionStore(engine)
    for size, start in ((1, 0), (5, 1), (len(events), 6)):
        await store.apply("g", events[start:start + size])
    stored = await PostgresEventStore(engine).all()
    assert stored == events


async def test_rows_read_back_in_utc_where_the_database_keeps_another_zone(
        berth_env: BerthTestEnv, engine: AsyncEngine) -> None:
    async with engine.begin() as conn:
        name = (await conn.execute(text("SELECT current_database()"))).scalar_one()
        await conn.execute(text(f'ALTER DATABASE "{name}" SET timezone TO \'Asia/Kolkata\''))
    local = make_engine(berth_env.database_url)
    try:
        events = _received()
        store = PostgresProjectionStore(local)
        for start in range(0, len(events), 4):  # every batch reads back rows the one before wrote
            await store.apply("g", events[start:start + 4])
        assert await store.load() == fold(e.envelope for e in events)
        async with local.connect() as pooled:
            raw = await pooled.get_raw_connection()
            model = await _load_rows(raw.driver_connection, {k for e in events for k in keys_for(e.envelope)})
        stamps = [getattr(row, f) for table in ("nodes", "pods", "attempts", "bindings", "preemptions")
                  for row in model.table(table).values()  # type: ignore[arg-type]
                  for f in row.__struct_fields__ if f.endswith("_at") and getattr(row, f) is not None]
        assert stamps and all(s.utcoffset() == timedelta(0) for s in stamps)
    finally:
        await local.dispose()
