"""The projector killed (SIGKILL) between its database commit and its Kafka offset commit, then
restarted: nothing is applied twice, and nothing is missed. And a SIGTERM stops it cleanly."""

from __future__ import annotations

import asyncio
import signal
import sys

import aiohttp
import pytest
from aiokafka import TopicPartition
from sqlalchemy.ext.asyncio import AsyncEngine

from berth.stack.processes import free_port
from services.projector.handlers import ProjectorHandler
from shared.adapters.kafka import KafkaPublisher, make_consumer, stop_consumer
from shared.adapters.postgres import PostgresEventStore, PostgresProjectionStore
from shared.events import OutgoingEvent, envelope
from shared.projection import fold
from tests.unit.events.samples import lifecycle

from .fixtures import BerthTestEnv
from .helpers import ROOT, run_projector, service_env

pytestmark = pytest.mark.integration
GROUP = "berth-projector"


async def _committed(env: BerthTestEnv, topics: list[str]) -> dict[tuple[str, int], int]:
    """The group's offsets as committed to Kafka (not the ones in the database)."""
    consumer = make_consumer(env.settings, group_id=GROUP, client_id="inspector")
    await consumer.start()
    try:
        found = {}
        for topic in topics:
            for p in range(env.registry.spec(topic).partitions):
                offset = await consumer.committed(TopicPartition(env.registry.physical(topic), p))
                if offset is not None:
                    found[(topic, p)] = offset
        return found
    finally:
        await stop_consumer(consumer)


async def test_killed_between_db_commit_and_offset_commit(berth_env: BerthTestEnv, engine: AsyncEngine,
                                                          publisher: KafkaPublisher) -> None:
    first = [OutgoingEvent(berth_env.registry.topic_of(p), envelope(p, producer="test")) for p in lifecycle(n_pods=6)]
    await publisher.publish(first)

    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.integration.crashing_projector",
        env=service_env(berth_env), cwd=ROOT, stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == -signal.SIGKILL, out
    applied_before_crash = int(out.decode().split()[-1])
    assert applied_before_crash > 0

    store = PostgresProjectionStore(engine)
    topics = sorted({o.topic for o in first})
    in_db = await store.positions(GROUP, [(t, p) for t in topics for p in range(berth_env.registry.spec(t).partitions)])
    assert in_db, "the database commit happened"
    assert await _committed(berth_env, topics) == {}, "the Kafka offset commit did not"

    later = [OutgoingEvent(berth_env.registry.topic_of(p), envelope(p, producer="test"))
             for p in lifecycle(n_pods=3, seed=11)]
    await publisher.publish(later)
    expected_new = len(first) + len(later) - applied_before_crash
    watched = await run_projector(berth_env, engine, expected_new)
    handler = watched.inner
    assert isinstance(handler, ProjectorHandler)
    assert handler.totals.applied == expected_new
    assert handler.totals.stale == 0 and handler.totals.duplicates == 0

    stored = await PostgresEventStore(engine).all()
    assert len(stored) == len({e.envelope.event_id for e in stored}) == len(first) + len(later)
    assert await store.load() == fold(e.envelope for e in stored)


async def test_sigterm_stops_the_projector_cleanly(berth_env: BerthTestEnv, engine: AsyncEngine,
                                                   publisher: KafkaPublisher) -> None:
    events = [OutgoingEvent(berth_env.registry.topic_of(p), envelope(p, producer="test")) for p in lifecycle(n_pods=2)]
    await publisher.publish(events)
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "services.projector", env=service_env(berth_env, BERTH_HTTP_PORT=str(port)), cwd=ROOT,
    )
    try:
        store = PostgresEventStore(engine)

        async def caught_up() -> None:
            while await store.count() < len(events):
                await asyncio.sleep(0.05)

        await asyncio.wait_for(caught_up(), 30)
        async with aiohttp.ClientSession() as http:
            async with http.get(f"http://127.0.0.1:{port}/readyz") as response:
                assert response.status == 200 and (await response.json())["ready"]
            async with http.get(f"http://127.0.0.1:{port}/metrics") as response:
                text = await response.text()
                assert "berth_events_consumed_total" in text and "berth_consumer_lag" in text
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 15) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    committed = await _committed(berth_env, sorted({e.topic for e in events}))
    in_db = await PostgresProjectionStore(engine).positions(GROUP, list(committed))
    assert committed and committed == in_db
