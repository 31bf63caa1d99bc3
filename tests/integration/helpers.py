"""Small helpers for integration tests: read a topic back, wait for a condition, watch a handler,
run the projector, start a service as a process."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from aiokafka import AIOKafkaConsumer, TopicPartition
from sqlalchemy.ext.asyncio import AsyncEngine

from services.projector.app import build as build_projector
from services.projector.settings import ProjectorSettings
from services.runtime import Handler
from shared.events import OutgoingEvent, Position, ReceivedEvent, TopicRegistry, decode
from shared.settings import Settings

from .fixtures import BerthTestEnv

ROOT = Path(__file__).resolve().parents[2]


async def read_topic(settings: Settings, registry: TopicRegistry, topic: str, *, count: int,
                     timeout: float = 10.0) -> list[tuple[Position, bytes]]:
    """The first `count` raw messages of a logical topic (all partitions, from the beginning)."""
    consumer = AIOKafkaConsumer(bootstrap_servers=settings.kafka_bootstrap_servers, group_id=None,
                                enable_auto_commit=False, auto_offset_reset="earliest")
    await consumer.start()
    try:
        physical = registry.physical(topic)
        tps = [TopicPartition(physical, p) for p in range(registry.spec(topic).partitions)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        found: list[tuple[Position, bytes]] = []

        async def collect() -> None:
            while len(found) < count:
                for tp, messages in (await consumer.getmany(timeout_ms=100)).items():
                    found.extend((Position(topic, tp.partition, m.offset), m.value) for m in messages)

        await asyncio.wait_for(collect(), timeout)
        return found
    finally:
        await consumer.stop()


async def read_events(settings: Settings, registry: TopicRegistry, topic: str, *, count: int,
                      timeout: float = 10.0) -> list[ReceivedEvent]:
    raw = await read_topic(settings, registry, topic, count=count, timeout=timeout)
    return [ReceivedEvent(decode(value, topic=topic), pos) for pos, value in raw]


async def eventually(check: Callable[[], Awaitable[bool]], timeout: float = 10.0, interval: float = 0.05) -> None:
    """Wait (bounded by `timeout`) until `check()` is true: for state in another process or the database."""

    async def poll() -> None:
        while not await check():
            await asyncio.sleep(interval)

    await asyncio.wait_for(poll(), timeout)


class Watched(Handler):
    """Wraps a handler; `wait_handled(n)` waits until n events went through it successfully."""

    def __init__(self, inner: Handler) -> None:
        self.inner = inner
        self.handled: list[ReceivedEvent] = []
        self._changed = asyncio.Event()

    async def handle(self, event: ReceivedEvent) -> Sequence[OutgoingEvent]:
        return await self.handle_batch([event])

    async def handle_batch(self, events: Sequence[ReceivedEvent]) -> Sequence[OutgoingEvent]:
        out = await self.inner.handle_batch(events)
        self.handled.extend(events)
        self._changed.set()
        return out

    async def positions(self, partitions):
        return await self.inner.positions(partitions)

    async def on_assigned(self, partitions):
        await self.inner.on_assigned(partitions)

    async def on_revoked(self, partitions):
        await self.inner.on_revoked(partitions)

    async def wait_handled(self, count: int, timeout: float = 15.0) -> None:
        async def wait() -> None:
            while len(self.handled) < count:
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(wait(), timeout)


async def run_projector(env: BerthTestEnv, engine: AsyncEngine, expected: int) -> Watched:
    """Run the projector until it has handled `expected` events."""
    settings = ProjectorSettings(base=env.settings.for_service("projector"))
    service = build_projector(settings, engine, registry=env.registry)
    watched = Watched(service.handler)
    service.handler = watched
    task = asyncio.create_task(service.run())
    try:
        await watched.wait_handled(expected)
    finally:
        service.request_stop()
        await asyncio.wait_for(task, 10)
    return watched


def service_env(env: BerthTestEnv, **extra: str) -> dict[str, str]:
    """The environment a service started as a process of its own runs with."""
    s = env.settings
    return {
        **os.environ,
        "KAFKA_BOOTSTRAP_SERVERS": s.kafka_bootstrap_servers or "",
        "DATABASE_URL": env.database_url,
        "BERTH_TOPIC_PREFIX": s.topic_prefix,
        "BERTH_KAFKA_SESSION_TIMEOUT_MS": str(s.kafka_session_timeout_ms),
        "BERTH_KAFKA_HEARTBEAT_MS": str(s.kafka_heartbeat_ms),
        "BERTH_LOG_LEVEL": "WARNING",
        "PYTHONPATH": str(ROOT),
        **extra,
    }
