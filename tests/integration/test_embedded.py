"""The embedded stack's launcher: it starts a working broker and database, and leaves nothing behind."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from aiokafka import TopicPartition

from berth.stack.embedded import EmbeddedStack, Endpoints
from berth.stack.tansu import kafka_metadata_probe
from shared.adapters.kafka import make_admin, make_consumer
from shared.adapters.postgres import PostgresProjectionStore, engine_scope
from shared.adapters.postgres.migrate import current_revision, head_revision
from shared.events import Position, ReceivedEvent, TopicRegistry, decode, envelope
from shared.settings import load_settings
from tests.unit.events.samples import sample_payloads

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def _gone(pid: int) -> bool:
    """No such process, or only a zombie (PID 1 of a container may never reap orphans)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _family(pids: dict[str, int]) -> list[int]:
    """The launched processes and all their children (Postgres forks its workers)."""
    found = []
    for pid in pids.values():
        try:
            proc = psutil.Process(pid)
            found += [pid, *(c.pid for c in proc.children(recursive=True))]
        except psutil.NoSuchProcess:
            pass
    return found


async def _wait_gone(pids: list[int], timeout: float = 10.0) -> None:
    async def poll() -> None:
        while not all(_gone(p) for p in pids):
            await asyncio.sleep(0.05)

    await asyncio.wait_for(poll(), timeout)


@pytest.fixture
def state_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="berth-launcher-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


async def test_stack_starts_answers_and_leaves_no_process(state_dir: Path) -> None:
    settings = load_settings({}, topic_prefix="launch.")
    stack = EmbeddedStack(state_dir, settings=settings, durable=False)
    async with stack as endpoints:
        family = _family(endpoints.pids)
        assert set(endpoints.pids) == {"tansu", "postgres"} and len(family) > 2
        host, port = endpoints.kafka_bootstrap_servers.split(":")
        assert await kafka_metadata_probe(host, int(port)) == 1
        assert await current_revision(endpoints.database_url) == head_revision()
        assert Endpoints(**json.loads(endpoints.to_json())) == endpoints

        admin = make_admin(endpoints.settings(settings))
        await admin.start()
        try:
            assert set(TopicRegistry("launch.").physical_names()) <= set(await admin.list_topics())
        finally:
            await admin.close()
    await _wait_gone(family)
    assert not (state_dir / "tansu.pid").exists() and not (state_dir / "postgres.pid").exists()


async def test_restart_keeps_the_database_and_rebuilds_the_log(state_dir: Path) -> None:
    settings = load_settings({})
    event = envelope(sample_payloads()[0], producer="t")
    async with EmbeddedStack(state_dir, settings=settings, durable=False) as first:
        async with engine_scope(first.database_url) as engine:
            store = PostgresProjectionStore(engine)
            await store.apply("g", [ReceivedEvent(event, Position("nodes", 0, 0))])
            assert await store.positions("g", [("nodes", 0)]) == {("nodes", 0): 1}
    stack = EmbeddedStack(state_dir, settings=settings, durable=False)
    async with stack as second:
        assert stack.restored is not None and stack.restored.events == 1
        async with engine_scope(second.database_url) as engine:
            store = PostgresProjectionStore(engine)
            assert len((await store.load()).nodes) == 1, "the database survived"
            assert await store.positions("g", [("nodes", 0)]) == {("nodes", 0): 1}, "positions stay true"
        consumer = make_consumer(second.settings(settings), group_id=None, client_id="t")
        await consumer.start()
        try:
            tp = TopicPartition(TopicRegistry(settings.topic_prefix).physical("nodes"), 0)
            consumer.assign([tp])
            await consumer.seek_to_beginning(tp)
            records = (await consumer.getmany(tp, timeout_ms=5000))[tp]
            assert [(r.offset, decode(r.value or b"")) for r in records] == [(0, event)], "the event is back"
        finally:
            await consumer.stop()


LAUNCHER = textwrap.dedent(
    """
    import faulthandler, signal, sys, time
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # the test asks where a launcher hangs
    # As started from a terminal: a test run started in the background (`&`, nohup) ignores SIGINT,
    # the launcher would inherit that, and Python leaves an inherited SIG_IGN alone.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from berth.stack.embedded import EmbeddedStack
    from shared.settings import load_settings
    stack = EmbeddedStack(sys.argv[1], settings=load_settings({}), durable=False, migrate=False, create_topics=False)
    endpoints = stack.start()
    print(endpoints.pids["tansu"], endpoints.pids["postgres"], flush=True)
    time.sleep(600)
    """
)


LAUNCHER_STOP_S = 15
"""A launcher exits 0.2-0.3 s after the signal (its children stop at exit)."""


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT], ids=["sigkill", "sigterm", "sigint"])
async def test_launcher_death_takes_its_children(state_dir: Path, how: signal.Signals, tmp_path: Path) -> None:
    stderr = tmp_path / "launcher.err"
    with stderr.open("wb") as err:
        proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, str(state_dir)], cwd=ROOT, stdout=subprocess.PIPE,
                                stderr=err, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 30)
        tansu, postgres = map(int, line.split())
        family = _family({"tansu": tansu, "postgres": postgres})
        assert all(not _gone(p) for p in family)
        proc.send_signal(how)
        try:
            await asyncio.wait_for(asyncio.to_thread(proc.wait), LAUNCHER_STOP_S)
        except TimeoutError:
            proc.send_signal(signal.SIGUSR1)
            await asyncio.sleep(1.0)
            alive = [p for p in family if not _gone(p)]
            pytest.fail(f"the launcher outlived {how.name} by {LAUNCHER_STOP_S}s; children alive: {alive}; "
                        f"its stderr and threads:\n{stderr.read_text(errors='replace')[-4000:]}")
        await _wait_gone(family)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
