"""Fixtures for tests against the real broker and database (imported by the conftests that need them).

`berth_env` gives each test its own topics (a fresh prefix) and its own migrated database, with
consumer-group timeouts short enough that a rebalance does not dominate the test's run time.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import pytest
from aiokafka import AIOKafkaProducer
from sqlalchemy.ext.asyncio import AsyncEngine

from berth.stack.pgserver import drop_database
from shared.adapters.kafka import KafkaPublisher, ensure_topics, make_admin, make_producer
from shared.adapters.postgres import make_engine
from shared.events import TopicRegistry
from shared.settings import Settings, load_settings

from .backends import Backend, close_shared_backend, create_test_database, shared_backend


@dataclass
class BerthTestEnv:
    backend: Backend
    settings: Settings
    registry: TopicRegistry
    database_url: str
    database_name: str


@pytest.fixture(scope="session")
def backend() -> Iterator[Backend]:
    yield shared_backend()
    close_shared_backend()


@pytest.fixture
async def berth_env(backend: Backend) -> AsyncIterator[BerthTestEnv]:
    prefix = f"t{uuid.uuid4().hex[:10]}."
    name, url = await create_test_database(backend)
    settings = load_settings(
        {},
        kafka_bootstrap_servers=backend.kafka_bootstrap_servers,
        database_url=url,
        topic_prefix=prefix,
        kafka_session_timeout_ms=backend.session_timeout_ms,
        kafka_heartbeat_ms=backend.session_timeout_ms // 10,
        kafka_linger_ms=0,
    )
    registry = TopicRegistry(prefix)
    await ensure_topics(settings, registry)
    try:
        yield BerthTestEnv(backend, settings, registry, url, name)
    finally:
        await drop_database(backend.admin_database_url, name)
        await _delete_topics(settings, registry)


async def _delete_topics(settings: Settings, registry: TopicRegistry) -> None:
    """Best effort: the in-memory broker keeps topics until it stops otherwise."""
    admin = make_admin(settings)
    with contextlib.suppress(Exception):
        await admin.start()
        await admin.delete_topics(registry.physical_names())
    with contextlib.suppress(Exception):
        await admin.close()


@pytest.fixture
async def engine(berth_env: BerthTestEnv) -> AsyncIterator[AsyncEngine]:
    eng = make_engine(berth_env.database_url)
    try:
        yield eng
    finally:
        await eng.dispose()


@pytest.fixture
async def producer(berth_env: BerthTestEnv) -> AsyncIterator[AIOKafkaProducer]:
    prod = make_producer(berth_env.settings, client_id="test-producer")
    await prod.start()
    try:
        yield prod
    finally:
        await prod.stop()


@pytest.fixture
def publisher(producer: AIOKafkaProducer, berth_env: BerthTestEnv) -> KafkaPublisher:
    return KafkaPublisher(producer, berth_env.registry)
