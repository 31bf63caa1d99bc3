"""The scheduling services as real processes on the real broker and database, disturbed while pods
flow: filter workers scaled 1 → 3 → 2, and every service SIGKILLed in turn and restarted. Whatever
happens, every pod ends bound exactly once or pending with its upstream reason, no node is
over-committed, and the Postgres projection equals the fold of the event log."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from berth.bench.ledger import Ledger, read_envelopes, read_ledger
from berth.fleet import Fleet, service_env
from berth.services import UpOptions
from services.projector.settings import ProjectorSettings
from shared.adapters.kafka import KafkaPublisher
from shared.adapters.postgres import PostgresEventStore, PostgresProjectionStore
from shared.model.loader import ClusterInput, load_objects
from shared.projection import fold

from .fixtures import BerthTestEnv
from .scheduler_cluster import publish_cluster, scenario_docs, with_uids

pytestmark = pytest.mark.integration


def _fleet(env: BerthTestEnv, logs: Path, filter_workers: int) -> Fleet:
    s = env.settings
    base = service_env(s.kafka_bootstrap_servers or "", env.database_url, s.topic_prefix, "chaos-token")
    base.update({
        "BERTH_KAFKA_SESSION_TIMEOUT_MS": str(s.kafka_session_timeout_ms),
        "BERTH_KAFKA_HEARTBEAT_MS": str(s.kafka_heartbeat_ms),
        "BERTH_KAFKA_LINGER_MS": "0",
        "BERTH_UNSCHEDULABLE_TIMEOUT_S": "5",
        "BERTH_LOG_LEVEL": "INFO",
    })
    return Fleet(base, logs, UpOptions(filter_workers=filter_workers))


def _waves(cluster: ClusterInput, n: int) -> list[ClusterInput]:
    """The nodes, the pods already running and the first share of the others, then the rest of the
    pods to schedule in `n - 1` more waves."""
    running = [p for p in cluster.pods if p.spec.node_name]
    queued = [p for p in cluster.pods if not p.spec.node_name]
    size = -(-len(queued) // n)
    parts = [queued[i:i + size] for i in range(0, len(queued), size)]
    return [ClusterInput(nodes=cluster.nodes, pods=running + parts[0]),
            *(ClusterInput(pods=part) for part in parts[1:])]


async def _settle(env: BerthTestEnv, timeout: float, quiet_s: float = 3.0) -> Ledger:
    """Poll the log until it is settled and nothing new has been bound or evicted for `quiet_s`."""
    deadline = time.monotonic() + timeout
    last: tuple[int, int] | None = None
    quiet_since = time.monotonic()
    while True:
        ledger = await read_ledger(env.settings, env.registry)
        mark = (len(ledger.bound), len(ledger.gone))
        if mark != last:
            last, quiet_since = mark, time.monotonic()
        if ledger.settled() and time.monotonic() - quiet_since >= quiet_s:
            return ledger
        assert time.monotonic() < deadline, (
            f"not settled: {len(ledger.bound)} bound, {len(ledger.gone)} gone, "
            f"{sum(m is None for m in ledger.pending.values())} pending without a decision, "
            f"{len(ledger.requested.keys() - ledger.answered)} binds unanswered; for example "
            f"{[(uid, ledger.history[uid]) for uid, m in ledger.pending.items() if m is None][:3]} "
            f"{ledger.problems()[:3]}")
        await asyncio.sleep(1.0)


async def _progress(env: BerthTestEnv, at_least: int, timeout: float = 60.0) -> None:
    """Wait until the scheduler has bound `at_least` pods: the disturbance that follows lands mid-run."""
    deadline = time.monotonic() + timeout
    while len((await read_ledger(env.settings, env.registry)).scheduled) < at_least:
        assert time.monotonic() < deadline, f"fewer than {at_least} pods bound"
        await asyncio.sleep(0.3)


async def _attempted(env: BerthTestEnv, wave: ClusterInput, fraction: float, timeout: float = 90.0) -> None:
    """Wait until `fraction` of the pods of `wave` were attempted (or are gone): a disturbance then
    lands while the rest of the wave flows."""
    uids = {p.metadata.uid for p in wave.pods if not p.spec.node_name}
    deadline = time.monotonic() + timeout
    while True:
        ledger = await read_ledger(env.settings, env.registry)
        left = uids - ledger.messages.keys() - ledger.gone
        if len(left) <= len(uids) * (1 - fraction):
            return
        assert time.monotonic() < deadline, f"{len(left)} pods never attempted, e.g. {sorted(left)[:3]}"
        await asyncio.sleep(0.3)


@asynccontextmanager
async def _running(fleet: Fleet) -> AsyncIterator[Fleet]:
    """The fleet's processes, started and stopped off the event loop (both block)."""
    try:
        await asyncio.to_thread(fleet.start_all)
        yield fleet
    finally:
        await asyncio.to_thread(fleet.stop_all)


async def _consumed(url: str) -> float:
    """Requests a filter replica has handled, from its /metrics."""
    async with aiohttp.ClientSession() as session, session.get(url + "/metrics") as resp:
        text = await resp.text()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("berth_events_consumed_total{"))


def _check(ledger: Ledger, cluster: ClusterInput) -> None:
    assert ledger.submitted == {p.metadata.uid for p in cluster.pods}, "every pod was submitted"
    assert not ledger.problems(), ledger.problems()[:10]
    assert ledger.bound, "pods were bound"


async def test_filter_workers_scale_out_and_in_while_pods_flow(
        berth_env: BerthTestEnv, publisher: KafkaPublisher, tmp_path: Path) -> None:
    cluster = with_uids(load_objects(("scenario", d) for d in scenario_docs(nodes=30, pods=360, seed=5)))
    waves = _waves(cluster, 3)
    fleet = _fleet(berth_env, tmp_path / "logs", filter_workers=1)
    async with _running(fleet) as running:
        await publish_cluster(publisher, waves[0])
        await _progress(berth_env, 20)
        await asyncio.to_thread(running.start, "filter")
        await asyncio.to_thread(running.start, "filter")
        assert sum(m.spec.name == "filter" for m in running.members.values()) == 3
        await publish_cluster(publisher, waves[1])
        await _progress(berth_env, len(waves[0].pods) // 2 + 40)
        assert await _consumed(running.members["filter-1"].url) > 0, "the new replica took shards"
        await asyncio.to_thread(running.stop, "filter-1")
        await publish_cluster(publisher, waves[2])
        ledger = await _settle(berth_env, timeout=240)
        assert running.first_dead() is None, running.first_dead()
    _check(ledger, cluster)
    assert len(ledger.gone) > 0, "preemption happened along the way"


async def test_each_service_killed_and_restarted_mid_run(
        berth_env: BerthTestEnv, publisher: KafkaPublisher, engine: AsyncEngine, tmp_path: Path) -> None:
    cluster = with_uids(load_objects(("scenario", d) for d in scenario_docs(nodes=30, pods=420, seed=8)))
    victims = ["queue", "filter", "binder", "preemption", "projector", "gateway"]
    waves = _waves(cluster, len(victims) + 1)
    fleet = _fleet(berth_env, tmp_path / "logs", filter_workers=2)
    async with _running(fleet) as running:
        await publish_cluster(publisher, waves[0])
        for victim, wave in zip(victims, waves[1:]):
            await publish_cluster(publisher, wave)
            await _attempted(berth_env, wave, fraction=0.3)
            await asyncio.to_thread(running.kill, victim)
            await asyncio.sleep(1.0)
            await asyncio.to_thread(running.restart, victim)
        ledger = await _settle(berth_env, timeout=150)
        assert running.first_dead() is None, running.first_dead()
        # Stop everything that publishes (pending pods are retried every few seconds), so the
        # projection and the log can be compared at one cut.
        for label in [m for m in reversed(list(running.members)) if m != "projector"]:
            await asyncio.to_thread(running.stop, label)
        projected = await _projection_caught_up(berth_env, engine, timeout=60)
    _check(ledger, cluster)
    stored = await PostgresEventStore(engine).all()
    assert projected == fold(e.envelope for e in stored)
    topics = ProjectorSettings(base=berth_env.settings).topics
    assert projected == fold(await read_envelopes(berth_env.settings, berth_env.registry, topics))


async def _projection_caught_up(env: BerthTestEnv, engine: AsyncEngine, timeout: float):  # type: ignore[no-untyped-def]
    """The projection once the event store holds every distinct event of the projected topics."""
    topics = ProjectorSettings(base=env.settings).topics
    wanted = {e.event_id: e for e in await read_envelopes(env.settings, env.registry, topics)}
    store = PostgresEventStore(engine)
    deadline = time.monotonic() + timeout
    while True:
        stored = {e.envelope.event_id for e in await store.all()}
        missing = wanted.keys() - stored
        if not missing:
            break
        assert time.monotonic() < deadline, (
            f"the projector did not catch up: {len(missing)} events missing, "
            f"{sorted({wanted[i].type for i in missing})}, {len(stored - wanted.keys())} unexpected")
        await asyncio.sleep(0.5)
    return await PostgresProjectionStore(engine).load()
