"""The projector against the real broker and database: exactly-once application, redelivery, fold."""

from __future__ import annotations

import msgspec
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from shared.adapters.kafka import KafkaPublisher
from shared.adapters.postgres import PostgresEventStore, PostgresProjectionStore
from shared.events import Envelope, OutgoingEvent, TopicRegistry, envelope
from shared.projection import fold
from tests.unit.events.samples import lifecycle, sample_payloads

from .fixtures import BerthTestEnv
from .helpers import run_projector

pytestmark = pytest.mark.integration


def _outgoing(payloads: list, registry: TopicRegistry) -> list[OutgoingEvent]:
    return [OutgoingEvent(registry.topic_of(p), envelope(p, producer="test")) for p in payloads]


async def test_projection_equals_fold_of_event_store(berth_env: BerthTestEnv, engine: AsyncEngine,
                                                     publisher: KafkaPublisher) -> None:
    events = _outgoing(lifecycle() + sample_payloads(), berth_env.registry)
    await publisher.publish(events)
    await run_projector(berth_env, engine, len(events))

    stored = await PostgresEventStore(engine).all()
    assert len(stored) == len(events)
    projection = await PostgresProjectionStore(engine).load()
    assert projection == fold(e.envelope for e in stored)
    assert projection == fold(e.envelope for e in events)  # the order across topics does not matter
    assert projection.pods["uid-0"].phase == "Deleted" and projection.pods["uid-0"].preempted_by == "uid-3"
    assert projection.pods["uid-2"].phase == "Bound"
    assert projection.pods["uid-3"].message and "Insufficient cpu" in projection.pods["uid-3"].message


async def test_redelivered_event_changes_nothing(berth_env: BerthTestEnv, engine: AsyncEngine,
                                                 publisher: KafkaPublisher) -> None:
    events = _outgoing(lifecycle(n_pods=4), berth_env.registry)
    await publisher.publish(events)
    await run_projector(berth_env, engine, len(events))
    store = PostgresProjectionStore(engine)
    before = await store.load()
    stored_before = await PostgresEventStore(engine).count()

    # The same events published again (a producer retry: same ids, new offsets) …
    await publisher.publish(events[:5])
    watched = await run_projector(berth_env, engine, 5)
    assert len(watched.handled) == 5
    # … and the same positions handed to the store again (a redelivery after a crash).
    again = await store.apply("berth-projector", watched.handled)
    assert again.applied == 0 and again.stale == 5

    assert await store.load() == before
    assert await PostgresEventStore(engine).count() == stored_before


async def test_stored_positions_survive_a_restart(berth_env: BerthTestEnv, engine: AsyncEngine,
                                                  publisher: KafkaPublisher) -> None:
    first = _outgoing(lifecycle(n_pods=3), berth_env.registry)
    await publisher.publish(first)
    await run_projector(berth_env, engine, len(first))
    second = _outgoing(lifecycle(n_pods=2, seed=9)[:6], berth_env.registry)
    second = [msgspec.structs.replace(o, envelope=_fresh(o.envelope)) for o in second]
    await publisher.publish(second)
    watched = await run_projector(berth_env, engine, len(second))
    assert len(watched.handled) == len(second), "a restarted projector starts at its stored positions"
    assert await PostgresEventStore(engine).count() == len(first) + len(second)


def _fresh(env: Envelope) -> Envelope:
    return envelope(env.payload, producer=env.producer)
