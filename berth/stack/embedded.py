"""The embedded stack: Tansu and PostgreSQL under a state directory, ready for Berth.

    with EmbeddedStack(Path(".berth")) as endpoints:            # or: async with EmbeddedStack(...)
        print(endpoints.kafka_bootstrap_servers, endpoints.database_url)

Starting means: launch the broker and the database on free loopback ports (each in its own process
group), wait until the broker answers a Metadata request and the database `SELECT 1`, create the
topics of the registry, create the `berth` database and run the Alembic migrations. A component whose
endpoint the settings already give (KAFKA_BOOTSTRAP_SERVERS, DATABASE_URL) is not launched; its
topics and migrations are still applied.

Stopping (context exit, `stop()`, interpreter exit, SIGTERM turned into KeyboardInterrupt, or the
launcher dying: parent-death signal) leaves no process behind; see `processes`.

Layout of the state directory:
    tansu.log, tansu.pid          the broker's output and pid
    postgres/                     the database cluster (kept between runs)
    postgres.log, postgres.pid    the server's output and pid

The embedded broker keeps messages in memory, so every start begins with empty topics while the
database keeps its rows: before anything else reads the broker, its log is rebuilt from the event
store and the gateway's accepted intents (`log_restore`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Coroutine
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from shared.adapters.postgres.engine import make_url_safe
from shared.errors import BerthError, EmbeddedStackError
from shared.events import TopicRegistry
from shared.settings import Settings, load_settings

from .pgserver import PostgresServer, create_database
from .processes import install_termination_handler
from .tansu import TansuBroker

if TYPE_CHECKING:
    from shared.adapters.log_restore import RestoreReport

log = logging.getLogger(__name__)
T = TypeVar("T")

DATABASE = "berth"


@dataclass(frozen=True, slots=True)
class Endpoints:
    """Where a running stack answers."""

    kafka_bootstrap_servers: str
    database_url: str
    topic_prefix: str
    state_dir: str
    pids: dict[str, int] = field(default_factory=dict)
    """Process ids of the embedded processes Berth launched (empty for external endpoints)."""

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True)

    def settings(self, base: Settings | None = None) -> Settings:
        """`base` (default: from the environment) pointed at these endpoints."""
        base = base or load_settings()
        return base.with_endpoints(kafka_bootstrap_servers=self.kafka_bootstrap_servers, database_url=self.database_url)


class EmbeddedStack:
    """Launches what the settings do not point elsewhere, prepares topics and schema, and stops it all."""

    def __init__(
        self,
        state_dir: Path | str | None = None,
        *,
        settings: Settings | None = None,
        registry: TopicRegistry | None = None,
        create_topics: bool = True,
        migrate: bool = True,
        durable: bool = True,
        database: str = DATABASE,
        ready_timeout: float = 30.0,
    ) -> None:
        self.settings = settings or load_settings()
        self.state_dir = Path(state_dir or self.settings.state_dir).resolve()
        self.registry = registry or TopicRegistry(self.settings.topic_prefix)
        self._create_topics, self._migrate = create_topics, migrate
        self._durable, self._database, self._timeout = durable, database, ready_timeout
        self.broker: TansuBroker | None = None
        self.postgres: PostgresServer | None = None
        self.endpoints: Endpoints | None = None
        self.restored: RestoreReport | None = None
        """What rebuilding the broker's log from the event store did (the launched broker starts empty)."""

    # --- synchronous API ----------------------------------------------------------------------

    def start(self) -> Endpoints:
        """Start and prepare everything; blocks until ready. Call from the main thread."""
        install_termination_handler()
        try:
            self._spawn()
            run_coroutine_sync(self._prepare())
        except BaseException:
            self.stop()
            raise
        assert self.endpoints is not None
        return self.endpoints

    def stop(self) -> None:
        """Stop what this stack launched (idempotent)."""
        errors = []
        for component in (self.broker, self.postgres):
            if component is not None:
                try:
                    component.stop()
                except Exception as exc:  # keep stopping the others
                    errors.append(exc)
        self.broker = self.postgres = None
        if errors:
            raise EmbeddedStackError(f"stopping the embedded stack: {errors}")

    def restart_broker(self) -> RestoreReport:
        """A broker that died, started again on its port; its log is rebuilt from the event store.
        The services must be stopped first: their positions belong to the log that was lost."""
        assert self.broker is not None and self.endpoints is not None, "start() first"
        port = self.broker.port
        self.broker.stop()
        self.broker = TansuBroker(self.state_dir, port=port)
        self.broker.start()
        broker = self.broker

        async def prepare() -> RestoreReport:
            from shared.adapters.kafka import ensure_topics
            from shared.adapters.log_restore import restore_log

            await broker.wait_ready(self._timeout)
            settings = self.endpoints.settings(self.settings) if self.endpoints else self.settings
            await ensure_topics(settings, self.registry)
            return await restore_log(settings, self.registry)

        try:
            self.restored = run_coroutine_sync(prepare())
        except BaseException:
            # Left running, a broker whose log was not rebuilt would pass for a live one and never
            # be tried again: stopped, it is restarted (and rebuilt) on the supervisor's next round.
            broker.stop()
            raise
        self._note_pids()
        return self.restored

    def restart_postgres(self) -> None:
        """A database server that died, started again on its port and data; clients reconnect."""
        assert self.postgres is not None and self.endpoints is not None, "start() first"
        port = self.postgres.port
        self.postgres.stop()
        self.postgres = PostgresServer(self.state_dir, port=port, durable=self._durable,
                                       os_user=self.settings.pg_os_user)
        self.postgres.start()
        try:
            run_coroutine_sync(self.postgres.wait_ready(self._timeout))
        except BaseException:
            self.postgres.stop()  # as for the broker: retried on the supervisor's next round
            raise
        self._note_pids()

    def _note_pids(self) -> None:
        if self.endpoints is not None:
            self.endpoints = replace(self.endpoints, pids=self._pids())

    def _pids(self) -> dict[str, int]:
        return {name: c.process.pid for name, c in (("tansu", self.broker), ("postgres", self.postgres))
                if c is not None and c.process is not None and c.process.pid is not None}

    def __enter__(self) -> Endpoints:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- asynchronous API ---------------------------------------------------------------------

    async def start_async(self) -> Endpoints:
        try:
            self._spawn()
            await self._prepare()
        except BaseException:
            await asyncio.to_thread(self.stop)
            raise
        assert self.endpoints is not None
        return self.endpoints

    async def stop_async(self) -> None:
        await asyncio.to_thread(self.stop)

    async def __aenter__(self) -> Endpoints:
        return await self.start_async()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop_async()

    # --- steps --------------------------------------------------------------------------------

    def _spawn(self) -> None:
        """Launch the processes (quick; readiness is awaited in `_prepare`)."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        if self.settings.embedded_kafka:
            self.broker = TansuBroker(self.state_dir)
            self.broker.start()
        if self.settings.embedded_postgres:
            self.postgres = PostgresServer(self.state_dir, durable=self._durable, os_user=self.settings.pg_os_user)
            self.postgres.start()

    async def _prepare(self) -> None:
        waits = [c.wait_ready(self._timeout) for c in (self.broker, self.postgres) if c is not None]
        await asyncio.gather(*waits)
        bootstrap = self.broker.bootstrap_servers if self.broker else self.settings.kafka_bootstrap_servers
        if self.postgres is not None:
            await create_database(self.postgres.url(), self._database)
            database_url: str | None = self.postgres.url(self._database)
        else:
            database_url = self.settings.database_url
        assert bootstrap and database_url
        settings = self.settings.with_endpoints(kafka_bootstrap_servers=bootstrap, database_url=database_url)
        await self._prepare_resources(settings)
        self.endpoints = Endpoints(bootstrap, database_url, self.settings.topic_prefix, str(self.state_dir),
                                   self._pids())
        log.info("embedded stack ready: kafka %s, database %s", bootstrap, make_url_safe(database_url))

    async def _prepare_resources(self, settings: Settings) -> None:
        # Imported here: launching processes must not need the client libraries loaded.
        from shared.adapters.kafka import ensure_topics
        from shared.adapters.log_restore import restore_log
        from shared.adapters.postgres.migrate import upgrade

        try:
            if self._create_topics:
                await ensure_topics(settings, self.registry)
            if self._migrate:
                assert settings.database_url
                await upgrade(settings.database_url)
                if self.broker is not None:
                    report = await restore_log(settings, self.registry)
                    log.info("%s", report.summary())
                    self.restored = report
        except BerthError as exc:
            raise EmbeddedStackError(f"preparing topics and schema: {exc}") from exc


def run_coroutine_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` to completion on a new event loop in a helper thread.

    The synchronous API must work whether or not the caller already runs an event loop (a sync
    pytest fixture next to pytest-asyncio's loop, a CLI command), and the helper thread spawns no
    processes, so the children's parent-death signal stays tied to the caller's thread.
    """
    outcome: dict[str, Any] = {}

    def runner() -> None:
        try:
            outcome["value"] = asyncio.run(coro)
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=runner, name="berth-embedded-prepare", daemon=True)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
