"""Two queues sharing one cluster (BERTH_QUEUE_PARTITIONS=2), each scheduling its share of the pods
with its own filter workers, one of them SIGKILLed and restarted mid-wave: every pod ends bound
exactly once or pending with its upstream reason, no node is over-committed, each queue decided
only its own pods, and replay re-makes every decision of both as recorded."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from berth.bench.ledger import Ledger
from services.queue.share import QueueShare
from shared.adapters.history import history_from_store
from shared.adapters.kafka import KafkaPublisher
from shared.binding.node_local import spans_nodes
from shared.events import SchedulingAttempted
from shared.framework.pod_info import PodInfo
from shared.model import Pod
from shared.model.loader import load_objects
from shared.replay.engine import Replayer

from .cluster_run import attempted, fleet_for, projection_caught_up, run_fleet, settle, waves_of
from .fixtures import BerthTestEnv
from .scheduler_cluster import publish_cluster, scenario_docs, with_uids

pytestmark = pytest.mark.integration


async def test_two_queues_share_the_pods_and_replay_exactly(
        berth_env: BerthTestEnv, publisher: KafkaPublisher, engine: AsyncEngine, tmp_path: Path) -> None:
    cluster = with_uids(load_objects(("scenario", d) for d in scenario_docs(nodes=30, pods=900, seed=13)))
    waves = waves_of(cluster, 3)
    fleet = fleet_for(berth_env, tmp_path / "logs", filter_workers=2, queues=2)
    async with run_fleet(fleet) as running:
        assert {"queue", "queue-1"} <= running.members.keys()
        for i, wave in enumerate(waves):
            await publish_cluster(publisher, wave)
            await attempted(berth_env, wave, fraction=0.3, timeout=180)
            if i == 1:
                await asyncio.to_thread(running.kill, "queue-1")
                await asyncio.sleep(1.0)
                await asyncio.to_thread(running.restart, "queue-1")
        ledger = await settle(berth_env, timeout=240)
        assert (dead := running.dead_report()) is None, dead
        for label in [m for m in reversed(list(running.members)) if m != "projector"]:
            await asyncio.to_thread(running.stop, label)
        await projection_caught_up(berth_env, engine, timeout=90)
    assert ledger.submitted == {p.metadata.uid for p in cluster.pods}
    assert not ledger.problems(), ledger.problems()[:10]
    assert len(ledger.gone) > 0, "preemption happened along the way"

    specs = {p.metadata.uid: p for p in cluster.pods}
    _no_host_anti_affinity_broken(ledger, specs)

    history = await history_from_store(engine)
    deciders: dict[str, set[str]] = {}
    for e in history.events:
        p = e.envelope.payload
        if isinstance(p, SchedulingAttempted):
            deciders.setdefault(e.envelope.producer, set()).add(p.pod_uid)
    assert deciders.keys() == {"queue", "queue-1"}, deciders.keys()
    for index, label in enumerate(("queue", "queue-1")):
        share = QueueShare(index, 2)
        assert all(share.owns(specs[uid]) for uid in deciders[label]), f"{label} decided another queue's pod"
        assert len(deciders[label]) > 100
    spread = {uid for uid, pod in specs.items() if spans_nodes(pod)}
    assert spread & deciders["queue"] and not spread & deciders["queue-1"], "one queue decides zone-wide pods"

    report = Replayer(history).run()
    assert report.divergences == [], report.divergences[:5]
    assert report.decisions >= 600 and report.matched == report.decisions


def _no_host_anti_affinity_broken(ledger: Ledger, specs: dict[str, Pod]) -> None:
    """No two pods bound to one node where either's required host anti-affinity selects the other."""
    by_node: dict[str, list[PodInfo]] = {}
    for uid in ledger.bound:
        node = ledger.view.node_of(uid)
        if node is not None and uid in specs:
            by_node.setdefault(node, []).append(PodInfo(specs[uid]))
    broken = [(a.uid, b.uid, node) for node, pods in by_node.items() for a in pods for b in pods
              if a is not b and any(t.topology_key == "kubernetes.io/hostname" and t.matches(b)
                                    for t in a.required_anti_affinity_terms)]
    assert not broken, broken[:5]
