"""Replay against a real recorded run: the scheduling services as processes, two filter workers,
thousands of pods with affinity, spread, taints and three priorities (so preemption happens), and
nodes shrunk while binds are in flight (so the binder rejects some). Replaying the event store must
re-make every decision as recorded; a what-if with one plugin's weight changed must report changes
named after score plugins; explain must agree with what the distributed run decided."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from berth.bench.ledger import read_ledger
from shared.adapters.history import export_line, history_from_export, history_from_kafka, history_from_store
from shared.adapters.kafka import KafkaPublisher
from shared.events import BindRejected, NodeUpserted, OutgoingEvent, PodEvicted, envelope
from shared.model.loader import load_objects
from shared.replay.diff import verdicts
from shared.replay.engine import Replayer
from shared.replay.explain import explain_attempt
from shared.replay.history import History

from .cluster_run import attempted, fleet_for, projection_caught_up, run_fleet, settle, waves_of
from .fixtures import BerthTestEnv
from .scheduler_cluster import publish_cluster, scenario_docs, with_uids

pytestmark = pytest.mark.integration

WEIGHTED: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler", "plugins": {"score": {"enabled": [
        {"name": "NodeResourcesBalancedAllocation", "weight": 40}]}}}],
}


def _shrunk(node: Any) -> Any:
    status = msgspec.structs.replace(node.status, allocatable={**node.status.allocatable, "cpu": "100m"})
    return msgspec.structs.replace(node, status=status)


async def _binds_waiting(env: BerthTestEnv, at_least: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        ledger = await read_ledger(env.settings, env.registry)
        if len(ledger.requested.keys() - ledger.answered) >= at_least:
            return
        assert time.monotonic() < deadline, "no binds were requested while the binder was stopped"
        await asyncio.sleep(0.3)


async def _record(env: BerthTestEnv, publisher: KafkaPublisher, engine: AsyncEngine, tmp: Path) -> History:
    cluster = with_uids(load_objects(("scenario", d) for d in scenario_docs(nodes=40, pods=900, seed=21)))
    waves = waves_of(cluster, 3)
    fleet = fleet_for(env, tmp / "logs", filter_workers=2)
    async with run_fleet(fleet) as running:
        await publish_cluster(publisher, waves[0])
        for i, wave in enumerate(waves[1:]):
            if i == 0:
                # Hold the binder still while this wave is decided, shrink every node under the binds
                # waiting for it, and restart it: it rebuilds its shards (the shrunk nodes) before it
                # judges those binds, so it rejects the ones that no longer fit.
                binder = running.members["binder"].process.pid
                assert binder is not None
                os.kill(binder, signal.SIGSTOP)
                await publish_cluster(publisher, wave)
                await _binds_waiting(env, at_least=5)
                await publisher.publish([OutgoingEvent("nodes", envelope(NodeUpserted(node=_shrunk(n)),
                                                                         producer="test"))
                                         for n in cluster.nodes])
                await asyncio.to_thread(running.kill, "binder")
                await asyncio.to_thread(running.restart, "binder")
            else:
                await publish_cluster(publisher, wave)
            await attempted(env, wave, fraction=0.5, timeout=180)
        await settle(env, timeout=300)
        assert running.first_dead() is None, running.first_dead()
        for label in [m for m in reversed(list(running.members)) if m != "projector"]:
            await asyncio.to_thread(running.stop, label)
        await projection_caught_up(env, engine, timeout=90)
    return await history_from_store(engine)


async def test_a_recorded_run_replays_exactly(
        berth_env: BerthTestEnv, publisher: KafkaPublisher, engine: AsyncEngine, tmp_path: Path) -> None:
    history = await _record(berth_env, publisher, engine, tmp_path)
    payloads = [e.envelope.payload for e in history.events]
    assert sum(isinstance(p, PodEvicted) for p in payloads) > 0, "preemption happened"
    assert sum(isinstance(p, BindRejected) for p in payloads) > 0, "the binder rejected binds"

    report = Replayer(history).run()
    assert report.divergences == [], report.divergences[:5]
    assert report.decisions >= 1000 and report.matched == report.decisions  # retries vary with timing
    assert report.preemptions > 0 and report.preemptions_matched == report.preemptions
    assert report.unknown_configs == []

    # Deterministic: the same input gives a byte-identical report.
    again = Replayer(history_from_store_copy(history)).run()
    assert msgspec.json.encode(again) == msgspec.json.encode(report)

    # The topics themselves and an export replay the same decisions.
    from_kafka = Replayer(await history_from_kafka(berth_env.settings, berth_env.registry)).run()
    assert (from_kafka.decisions, from_kafka.matched, from_kafka.divergences) == (report.decisions, report.matched, [])
    export = tmp_path / "log.jsonl"
    export.write_text("".join(export_line(e) + "\n" for e in history.events))
    assert msgspec.json.encode(Replayer(history_from_export(export)).run().divergences) == b"[]"

    # What if NodeResourcesBalancedAllocation had weighed 40?
    what_if = load_objects([("weighted.yaml", WEIGHTED)]).config
    changed = Replayer(history, what_if=what_if, what_if_name="weighted.yaml").run()
    changes = [d for d in changed.divergences if d.kind == "what-if"]
    assert changed.changed == len(changes) > 0
    assert not [d for d in changed.divergences if d.kind != "what-if"]
    score_plugins = {"NodeResourcesBalancedAllocation", "NodeResourcesFit", "TaintToleration", "NodeAffinity",
                     "PodTopologySpread", "InterPodAffinity", "ImageLocality"}
    earlier = "pods decided earlier in the cycle were placed differently"
    assert all(d.plugin in score_plugins or d.detail == earlier for d in changes), [
        d for d in changes if d.plugin not in score_plugins][:5]
    assert any(d.plugin == "NodeResourcesBalancedAllocation" for d in changes)
    # A weight cannot change a pod that fit nowhere, or fit one node only.
    assert all(d.recorded.startswith(("bound to", "retried")) for d in changes), changes[:5]

    # Explain agrees with the distributed run: the pick, and each walked node's verdict as the shards gave it.
    checked = 0
    for recorded in history.decisions[::max(1, len(history.decisions) // 25)]:
        batch = history.batches.get(recorded.decision.batch_id)
        if batch is None:
            continue
        x = explain_attempt(history, recorded.decision.pod_uid, recorded.decision.attempt)
        assert x.replayed == x.recorded, (x.pod, x.attempt)
        shards = verdicts([r for a in batch.answers if a.phase == "filter" for r in a.results
                           if r.pod_uid == recorded.decision.pod_uid])
        for node in x.nodes:
            if node.walked and node.node in shards.nodes:
                plugin, reason = shards.nodes[node.node]
                assert node.status == ("fits" if reason == "fits" else f"{plugin}: {reason}"), (x.pod, node.node)
        checked += 1
    assert checked >= 10


def history_from_store_copy(history: History) -> History:
    """A second History built from the same events (nothing cached between the runs)."""
    return History(list(history.events))
