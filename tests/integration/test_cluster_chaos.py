"""The scheduling services as real processes on the real broker and database, disturbed while pods
flow: filter workers scaled 1 → 3 → 2, and every service SIGKILLed in turn and restarted. Whatever
happens, every pod ends bound exactly once or pending with its upstream reason, no node is
over-committed, and the Postgres projection equals the fold of the event log."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from berth.bench.ledger import Ledger, read_envelopes
from services.projector.settings import ProjectorSettings
from shared.adapters.kafka import KafkaPublisher
from shared.adapters.postgres import PostgresEventStore
from shared.model.loader import ClusterInput, load_objects
from shared.projection import fold

from .cluster_run import attempted, fleet_for, progress, projection_caught_up, run_fleet, settle, waves_of
from .fixtures import BerthTestEnv
from .scheduler_cluster import publish_cluster, scenario_docs, with_uids

pytestmark = pytest.mark.integration


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
    waves = waves_of(cluster, 3)
    fleet = fleet_for(berth_env, tmp_path / "logs", filter_workers=1)
    # Three small batches out at once, one per worker: the queue sends a worker nothing while
    # fewer keep it busy, and which partitions the new replica gets decides whether it would be.
    fleet.env.update({"BERTH_QUEUE_PIPELINE": "3", "BERTH_QUEUE_BATCH": "8"})
    async with run_fleet(fleet) as running:
        await publish_cluster(publisher, waves[0])
        await progress(berth_env, 20)
        await asyncio.to_thread(running.start, "filter")
        await asyncio.to_thread(running.start, "filter")
        assert sum(m.spec.name == "filter" for m in running.members.values()) == 3
        await publish_cluster(publisher, waves[1])
        await progress(berth_env, len(waves[0].pods) // 2 + 40)
        assert await _consumed(running.members["filter-1"].url) > 0, "the new replica took shards"
        await asyncio.to_thread(running.stop, "filter-1")
        await publish_cluster(publisher, waves[2])
        ledger = await settle(berth_env, timeout=240)
        assert (dead := running.dead_report()) is None, dead
    _check(ledger, cluster)
    assert len(ledger.gone) > 0, "preemption happened along the way"


async def test_each_service_killed_and_restarted_mid_run(
        berth_env: BerthTestEnv, publisher: KafkaPublisher, engine: AsyncEngine, tmp_path: Path) -> None:
    cluster = with_uids(load_objects(("scenario", d) for d in scenario_docs(nodes=30, pods=420, seed=8)))
    victims = ["queue", "filter", "binder", "preemption", "projector", "gateway"]
    waves = waves_of(cluster, len(victims) + 1)
    fleet = fleet_for(berth_env, tmp_path / "logs", filter_workers=2)
    async with run_fleet(fleet) as running:
        await publish_cluster(publisher, waves[0])
        for victim, wave in zip(victims, waves[1:]):
            await publish_cluster(publisher, wave)
            await attempted(berth_env, wave, fraction=0.3)
            await asyncio.to_thread(running.kill, victim)
            await asyncio.sleep(1.0)
            await asyncio.to_thread(running.restart, victim)
        ledger = await settle(berth_env, timeout=150)
        assert (dead := running.dead_report()) is None, dead
        # Stop everything that publishes (pending pods are retried every few seconds), so the
        # projection and the log can be compared at one cut.
        for label in [m for m in reversed(list(running.members)) if m != "projector"]:
            await asyncio.to_thread(running.stop, label)
        projected = await projection_caught_up(berth_env, engine, timeout=60)
    _check(ledger, cluster)
    stored = await PostgresEventStore(engine).all()
    assert projected == fold(e.envelope for e in stored)
    topics = ProjectorSettings(base=berth_env.settings).topics
    assert projected == fold(await read_envelopes(berth_env.settings, berth_env.registry, topics))
