"""Scheduler extenders in the distributed scheduler: the services run as processes with a
KubeSchedulerConfiguration naming two real HTTP extenders (the examples, in threads here). The
queue asks them, records their answers in the log, and replay re-makes every decision from the
recorded answers without calling them again."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy.ext.asyncio import AsyncEngine

from shared.adapters.history import history_from_store
from shared.adapters.kafka import KafkaPublisher
from shared.events import ExtendersAnswered, PodBound, PodEvicted, PreemptionDecided
from shared.model.loader import ClusterInput
from shared.replay.engine import Replayer
from tests.builders import MakeNode, MakePod
from tests.unit.extender.servers import running

from .cluster_run import fleet_for, projection_caught_up, run_fleet, settle
from .fixtures import BerthTestEnv
from .scheduler_cluster import publish_cluster

pytestmark = pytest.mark.integration

FULL_REASON = "node(s) are full according to the extender"


def _cluster() -> ClusterInput:
    nodes = [MakeNode().name(f"n{i}").label("kubernetes.io/hostname", f"n{i}").capacity(cpu="8", memory="16Gi",
                                                                                        pods="110").obj()
             for i in range(4)]
    pods = [MakePod().name(f"p{i:02}").uid(f"uid-p{i:02}").req(cpu="100m").obj() for i in range(24)]
    # Only n1 passes the in-tree filters for this pod, and the extender says n1 is full.
    pods.append(MakePod().name("pinned").uid("uid-pinned").req(cpu="100m")
                .node_selector({"kubernetes.io/hostname": "n1"}).obj())
    return ClusterInput(nodes=nodes, pods=pods)


def _config(full_url: str, prio_url: str, binder_url: str) -> dict[str, Any]:
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "extenders": [{"urlPrefix": full_url, "filterVerb": "filter"},
                          {"urlPrefix": prio_url, "prioritizeVerb": "prioritize", "weight": 5},
                          {"urlPrefix": binder_url, "bindVerb": "bind"}]}


async def test_services_ask_the_extenders_and_replay_uses_their_recorded_answers(
        berth_env: BerthTestEnv, publisher: KafkaPublisher, engine: AsyncEngine, tmp_path: Path) -> None:
    cluster = _cluster()
    with running("full_node", full={"n1"}) as full, running("prioritizer", preferred={"n2"}) as prio, \
            running("binder") as binder:
        config = tmp_path / "scheduler.yaml"
        config.write_text(yaml.safe_dump(_config(full.url, prio.url, binder.url)))
        fleet = fleet_for(berth_env, tmp_path / "logs", filter_workers=1)
        fleet.env["BERTH_SCHEDULER_CONFIG"] = str(config)
        async with run_fleet(fleet) as running_fleet:
            await publish_cluster(publisher, cluster)
            ledger = await settle(berth_env, timeout=120)
            assert (dead := running_fleet.dead_report()) is None, dead
            for label in [m for m in reversed(list(running_fleet.members)) if m != "projector"]:
                await asyncio.to_thread(running_fleet.stop, label)
            await projection_caught_up(berth_env, engine, timeout=60)
        calls_during_run = (len(full.calls), len(prio.calls))
        history = await history_from_store(engine)

        bound = {p.pod_uid: p.node_name for p in (e.envelope.payload for e in history.events)
                 if isinstance(p, PodBound)}
        assert len(bound) == 24 and "uid-pinned" not in bound
        assert "n1" not in bound.values(), "the extender's full node got a pod"
        # The binding extender bound each of them, where the binder service then recorded it.
        assert binder.bound == {f"default/p{uid[5:]}": node for uid, node in bound.items()}
        # The prioritizer's preferred node wins the ties of equally empty nodes at first.
        assert bound["uid-p00"] == "n2"
        number, message = ledger.messages["uid-pinned"]
        assert number >= 1 and message is not None and f"1 {FULL_REASON}" in message
        assert message.startswith("0/4 nodes are available:")

        asked = [p for p in (e.envelope.payload for e in history.events) if isinstance(p, ExtendersAnswered)]
        assert {a.pod_uid for a in asked} >= set(bound) | {"uid-pinned"}
        assert calls_during_run[0] > 0 and calls_during_run[1] > 0

        report = Replayer(history).run()
        assert report.divergences == [] and report.decisions >= 25 and report.matched == report.decisions
        assert (len(full.calls), len(prio.calls)) == calls_during_run, "replay called an extender"


async def test_preemption_service_asks_the_preempt_extender_and_replay_uses_its_answers(
        berth_env: BerthTestEnv, publisher: KafkaPublisher, engine: AsyncEngine, tmp_path: Path) -> None:
    nodes = [MakeNode().name(n).capacity(cpu="1", memory="8Gi", pods="10").obj() for n in ("a", "b")]
    low = [MakePod().name(f"low-{n}").uid(f"uid-low-{n}").node(n).priority(1).req(cpu="1").obj() for n in ("a", "b")]
    high = MakePod().name("high").uid("uid-high").priority(100).req(cpu="1").obj()
    with running("preempt", protected={"a"}) as server:
        config = tmp_path / "scheduler.yaml"
        config.write_text(yaml.safe_dump({
            "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "extenders": [{"urlPrefix": server.url, "preemptVerb": "preempt", "nodeCacheCapable": True}]}))
        fleet = fleet_for(berth_env, tmp_path / "logs", filter_workers=1)
        fleet.env["BERTH_SCHEDULER_CONFIG"] = str(config)
        async with run_fleet(fleet) as running_fleet:
            await publish_cluster(publisher, ClusterInput(nodes=nodes, pods=[*low, high]))
            await settle(berth_env, timeout=120)
            assert (dead := running_fleet.dead_report()) is None, dead
            for label in [m for m in reversed(list(running_fleet.members)) if m != "projector"]:
                await asyncio.to_thread(running_fleet.stop, label)
            await projection_caught_up(berth_env, engine, timeout=60)
        calls_during_run = len(server.calls)
        history = await history_from_store(engine)

    payloads = [e.envelope.payload for e in history.events]
    evicted = [p.uid for p in payloads if isinstance(p, PodEvicted)]
    bound = {p.pod_uid: p.node_name for p in payloads if isinstance(p, PodBound)}
    assert evicted == ["uid-low-b"] and bound == {"uid-high": "b"}  # node a is protected by the extender
    decided = [p for p in payloads if isinstance(p, PreemptionDecided) and p.nominated_node]
    assert decided and decided[0].extenders and decided[0].extenders[0].victims == {"b": ["uid-low-b"]}
    assert calls_during_run >= 1

    report = Replayer(history).run()
    assert report.divergences == [] and report.preemptions >= 1
    assert report.preemptions_matched == report.preemptions
