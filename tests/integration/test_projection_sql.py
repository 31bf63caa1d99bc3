"""The projector's statements on a real Postgres: events are stored in the order applied and read
back as they were, and rows read back through JSON keep their instants in UTC whatever the
database's own time zone."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from shared.adapters.postgres import PostgresEventStore, PostgresProjectionStore, make_engine
from shared.adapters.postgres.projection_store import load_rows
from shared.events import (
    AnyEvent,
    BindRejected,
    NodeUpserted,
    PodBound,
    PodNominated,
    PodSubmitted,
    ReceivedEvent,
    SchedulingAttempted,
)
from shared.projection import fold, keys_for
from tests.unit.events.samples import lifecycle, make_node, make_pod, received, sample_payloads

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
            model = await load_rows(raw.driver_connection, {k for e in events for k in keys_for(e.envelope)})
        stamps = [getattr(row, f) for table in ("nodes", "pods", "attempts", "bindings", "preemptions")
                  for row in model.table(table).values()
                  for f in row.__struct_fields__ if f.endswith("_at") and getattr(row, f) is not None]
        assert stamps and all(s.utcoffset() == timedelta(0) for s in stamps)
    finally:
        await local.dispose()


async def test_a_pod_loaded_without_its_spec_keeps_it_and_its_node_name(engine: AsyncEngine) -> None:
    """Pods are loaded without their spec (the fold never reads it): each event applied in a batch
    of its own writes the row back keeping the stored spec, and a pod created on a node its node
    refused still shows that node."""
    placed = make_pod("placed", "uid-placed", node_name="node-a")
    free = make_pod("free", "uid-free")
    payloads: list[AnyEvent] = [
        NodeUpserted(node=make_node("node-a")),
        PodSubmitted(pod=placed),
        PodSubmitted(pod=free),
        BindRejected(pod_uid="uid-placed", attempt_id="admission/uid-placed/1", node_name="node-a",
                     reason="Pod was rejected: Node didn't have enough resource: cpu", status_reason="OutOfcpu"),
        SchedulingAttempted(pod_uid="uid-free", attempt=1, profile="default-scheduler", node_name="node-a",
                            message="", seed=1, config_hash="h"),
        PodBound(pod_uid="uid-free", attempt_id="a-1", node_name="node-a"),
        PodNominated(uid="uid-free", node_name=""),
    ]
    events = received(payloads)
    store = PostgresProjectionStore(engine)
    for event in events:
        await store.apply("g", [event])
    model = await store.load()
    assert model == fold(e.envelope for e in events)
    assert model.pods["uid-placed"].pod == placed and model.pods["uid-placed"].node_name == "node-a"
    assert model.pods["uid-placed"].phase == "Failed"
    assert model.pods["uid-free"].pod == free and model.pods["uid-free"].node_name == "node-a"
