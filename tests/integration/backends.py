"""A real broker and database for the test session, chosen once:

1. the environment's endpoints, when KAFKA_BOOTSTRAP_SERVERS / DATABASE_URL are set (each one that
   is missing is embedded);
2. otherwise testcontainers (apache/kafka in KRaft mode, postgres), when a Docker daemon answers;
3. otherwise the embedded pair (Tansu + PostgreSQL) under a temporary state directory.

Tests are isolated from each other by a fresh topic prefix (their own topics) and a fresh database
cloned from a migrated template (CREATE DATABASE … TEMPLATE, a few milliseconds). The database user
of an external DATABASE_URL therefore needs CREATEDB.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from berth.stack.embedded import EmbeddedStack, run_coroutine_sync
from berth.stack.pgserver import create_database, drop_database
from berth.stack.processes import free_port
from berth.stack.tansu import kafka_metadata_probe
from shared.adapters.postgres import plain_url
from shared.adapters.postgres.migrate import upgrade
from shared.settings import Settings, load_settings

TEMPLATE = "berth_test_template"


@dataclass
class Backend:
    kind: str
    """"environment", "testcontainers" or "embedded"."""
    kafka_bootstrap_servers: str
    admin_database_url: str
    """A URL of the server (any database) with the right to create databases."""
    pids: dict[str, int] = field(default_factory=dict)
    session_timeout_ms: int = 2000
    """Consumer-group session timeout for tests. Tansu holds a rebalance for half of it (at least
    1 s), so short is fast; a real Kafka refuses less than its group.min.session.timeout.ms (6 s by
    default), which the container lowers and an external broker may not."""
    _closers: list[Any] = field(default_factory=list)

    def database_url(self, name: str) -> str:
        base, _, query = plain_url(self.admin_database_url).partition("?")
        server = base.rsplit("/", 1)[0]
        return f"{server}/{name}" + (f"?{query}" if query else "")

    def close(self) -> None:
        while self._closers:
            with contextlib.suppress(Exception):
                self._closers.pop()()


def _docker_answers() -> bool:
    if not (os.environ.get("DOCKER_HOST") or Path("/var/run/docker.sock").exists()):
        return False
    try:
        import docker

        client = docker.from_env(timeout=3)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:
        return False


def _start_containers() -> Backend:
    import asyncio
    import time

    from testcontainers.core.container import DockerContainer
    from testcontainers.postgres import PostgresContainer

    port = free_port()
    kafka = (
        DockerContainer("apache/kafka:3.9.0")
        .with_bind_ports(9092, port)
        .with_env("KAFKA_NODE_ID", "1")
        .with_env("KAFKA_PROCESS_ROLES", "broker,controller")
        .with_env("KAFKA_LISTENERS", "PLAINTEXT://0.0.0.0:9092,CONTROLLER://0.0.0.0:9093")
        .with_env("KAFKA_ADVERTISED_LISTENERS", f"PLAINTEXT://127.0.0.1:{port}")
        .with_env("KAFKA_CONTROLLER_LISTENER_NAMES", "CONTROLLER")
        .with_env("KAFKA_LISTENER_SECURITY_PROTOCOL_MAP", "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT")
        .with_env("KAFKA_CONTROLLER_QUORUM_VOTERS", "1@localhost:9093")
        .with_env("KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR", "1")
        .with_env("KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS", "0")
        .with_env("KAFKA_GROUP_MIN_SESSION_TIMEOUT_MS", "1000")
    )
    postgres = PostgresContainer("postgres:17", driver=None)
    kafka.start()
    postgres.start()
    deadline = time.monotonic() + 60
    while True:
        try:
            asyncio.run(asyncio.wait_for(kafka_metadata_probe("127.0.0.1", port), 2))
            break
        except (OSError, EOFError, TimeoutError, ValueError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    return Backend("testcontainers", f"127.0.0.1:{port}", postgres.get_connection_url(driver=None),
                   _closers=[kafka.stop, postgres.stop])


def _start_embedded(env: Settings) -> Backend:
    state_dir = Path(tempfile.mkdtemp(prefix="berth-test-"))
    stack = EmbeddedStack(state_dir, settings=env, create_topics=False, migrate=False, durable=False,
                          database="postgres")
    try:
        endpoints = stack.start()
    except BaseException:
        shutil.rmtree(state_dir, ignore_errors=True)
        raise
    return Backend("embedded", endpoints.kafka_bootstrap_servers, endpoints.database_url, dict(endpoints.pids),
                   _closers=[lambda: shutil.rmtree(state_dir, ignore_errors=True), stack.stop])


def start_backend() -> Backend:
    env = load_settings()
    if env.kafka_bootstrap_servers and env.database_url:
        backend = Backend("environment", env.kafka_bootstrap_servers, env.database_url, session_timeout_ms=6000)
    elif not env.kafka_bootstrap_servers and not env.database_url and _docker_answers():
        backend = _start_containers()
    else:
        backend = _start_embedded(env)
    try:
        run_coroutine_sync(_prepare_template(backend))
    except BaseException:
        backend.close()
        raise
    return backend


async def _prepare_template(backend: Backend) -> None:
    await drop_database(backend.admin_database_url, TEMPLATE)
    await create_database(backend.admin_database_url, TEMPLATE)
    await upgrade(backend.database_url(TEMPLATE))


async def create_test_database(backend: Backend) -> tuple[str, str]:
    """(name, URL) of a fresh, migrated database of its own."""
    name = f"berth_test_{uuid.uuid4().hex[:12]}"
    await create_database(backend.admin_database_url, name, template=TEMPLATE, exist_ok=False)
    return name, backend.database_url(name)


_shared: Backend | None = None


def shared_backend() -> Backend:
    """The session's backend, started on first use (one per test process, whichever conftest asks)."""
    global _shared
    if _shared is None:
        _shared = start_backend()
    return _shared


def close_shared_backend() -> None:
    global _shared
    if _shared is not None:
        _shared.close()
        _shared = None
