"""Scheduler extenders in the distributed scheduler: the services run as processes with a
KubeSchedulerConfiguration naming two real HTTP extenders (the examples, in threads here). The
queue asks them, records their answers in the log, and replay re-makes every decision from the
recorded answers without calling them again."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy.ext.asyncio import AsyncEngine

from berth.bench.ledger import Ledger
from shared.adapters.history import history_from_store
from shared.adapters.kafka import KafkaPublisher
from shared.binding.admission import is_admission
from shared.events import ExtenderAnswer, ExtendersAnswered, LateBatchDecided, PodBound, PodEvicted, PreemptionDecided
from shared.model.loader import ClusterInput
from shared.replay.engine import Replayer, outcome_text
from shared.replay.explain import explain_attempt
from shared.replay.history import History
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


async def _run(env: BerthTestEnv, engine: AsyncEngine, tmp_path: Path, config: dict[str, Any],
               feed: Callable[[], Awaitable[None]], *, propose: bool = False) -> tuple[Ledger, History]:
    """The services with `config`, fed by `feed`, run until settled and stopped (the projector
    last, so the store holds every event); the run's ledger and the stored history."""
    path = tmp_path / "scheduler.yaml"
    path.write_text(yaml.safe_dump(config))
    fleet = fleet_for(env, tmp_path / "logs", filter_workers=1)
    fleet.env["BERTH_SCHEDULER_CONFIG"] = str(path)
    fleet.env["BERTH_QUEUE_PROPOSE"] = "1" if propose else "0"
    async with run_fleet(fleet) as running_fleet:
        await feed()
        ledger = await settle(env, timeout=120)
        assert (dead := running_fleet.dead_report()) is None, dead
        for label in [m for m in reversed(list(running_fleet.members)) if m != "projector"]:
            await asyncio.to_thread(running_fleet.stop, label)
        await projection_caught_up(env, engine, timeout=60)
    return ledger, await history_from_store(engine)


@pytest.mark.parametrize("propose", [False, True], ids=["queue-ranks", "workers-propose"])
async def test_services_ask_the_extenders_and_replay_uses_their_recorded_answers(
        berth_env: BerthTestEnv, publisher: KafkaPublisher, engine: AsyncEngine, tmp_path: Path,
        propose: bool) -> None:
    """With proposals on, the pods an extender is asked about are still ranked by the queue."""
    cluster = _cluster()
    with running("full_node", full={"n1"}) as full, running("prioritizer", preferred={"n2"}) as prio, \
            running("binder") as binder:
        ledger, history = await _run(berth_env, engine, tmp_path, _config(full.url, prio.url, binder.url),
                                     lambda: publish_cluster(publisher, cluster), propose=propose)
        calls_during_run = (len(full.calls), len(prio.calls))

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
        _, history = await _run(berth_env, engine, tmp_path, {
            "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "extenders": [{"urlPrefix": server.url, "preemptVerb": "preempt", "nodeCacheCapable": True}]},
            lambda: publish_cluster(publisher, ClusterInput(nodes=nodes, pods=[*low, high])))
        calls_during_run = len(server.calls)

    payloads = [e.envelope.payload for e in history.events]
    evicted = [p.uid for p in payloads if isinstance(p, PodEvicted)]
    bound = {p.pod_uid: p.node_name for p in payloads if isinstance(p, PodBound) and not is_admission(p.attempt_id)}
    assert evicted == ["uid-low-b"] and bound == {"uid-high": "b"}  # node a is protected by the extender
    decided = [p for p in payloads if isinstance(p, PreemptionDecided) and p.nominated_node]
    assert decided and decided[0].extenders and decided[0].extenders[0].victims == {"b": ["uid-low-b"]}
    assert calls_during_run >= 1

    report = Replayer(history).run()
    assert report.divergences == [] and report.preemptions >= 1
    assert report.preemptions_matched == report.preemptions


def _failure_config(slow: str, cache: str, after_cache: str, broken: str) -> dict[str, Any]:
    gpu = [{"name": "example.com/gpu", "ignoredByScheduler": True}]
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "extenders": [
        # Every pod is sent; it answers too late, and being ignorable it is passed over.
        {"urlPrefix": slow, "filterVerb": "filter", "httpTimeout": "200ms", "ignorable": True},
        # Only pods asking for the managed resource are sent, then on to the next extender.
        {"urlPrefix": cache, "filterVerb": "filter", "nodeCacheCapable": True, "managedResources": gpu},
        {"urlPrefix": after_cache, "filterVerb": "filter", "managedResources": gpu},
        # Too late and not ignorable: its pods' attempts fail.
        {"urlPrefix": broken, "filterVerb": "filter", "httpTimeout": "200ms",
         "managedResources": [{"name": "example.com/fpga", "ignoredByScheduler": True}]},
    ]}


def _answers_of(history: History, extender: str) -> list[tuple[str, ExtenderAnswer]]:
    """(pod uid, answer) for every recorded call of `extender` (by its urlPrefix)."""
    return [(p.pod_uid, a) for p in (e.envelope.payload for e in history.events)
            if isinstance(p, ExtendersAnswered) for a in p.answers if a.extender == extender]


async def test_services_pass_over_an_ignorable_timeout_send_managed_pods_only_and_fail_on_a_strict_timeout(
        berth_env: BerthTestEnv, publisher: KafkaPublisher, engine: AsyncEngine, tmp_path: Path) -> None:
    # n0 is the largest node, so it scores best for every pod unless an extender rules it out.
    nodes = [MakeNode().name(f"n{i}").label("kubernetes.io/hostname", f"n{i}").capacity(
        cpu="64" if i == 0 else "8", memory="128Gi" if i == 0 else "16Gi", pods="110").obj() for i in range(4)]
    plain = [MakePod().name(f"p{i}").uid(f"uid-p{i}").req(cpu="100m").obj() for i in range(6)]
    # No node offers these resources: the extenders manage them, and NodeResourcesFit ignores them.
    gpu = [MakePod().name(f"gpu{i}").uid(f"uid-gpu{i}").res({"cpu": "100m", "example.com/gpu": 1}).obj()
           for i in range(3)]
    fpga = [MakePod().name(f"fpga{i}").uid(f"uid-fpga{i}").res({"cpu": "100m", "example.com/fpga": 1}).obj()
            for i in range(2)]
    with running("full_node", full={"n0"}, delay=1.0) as slow, running("node_cache", blocked={"n1"}) as cache, \
            running("full_node", full={"n2"}) as after_cache, running("full_node", delay=1.0) as broken:
        ledger, history = await _run(
            berth_env, engine, tmp_path, _failure_config(slow.url, cache.url, after_cache.url, broken.url),
            lambda: publish_cluster(publisher, ClusterInput(nodes=nodes, pods=[*plain, *gpu, *fpga])))
        calls_during_run = [len(s.calls) for s in (slow, cache, after_cache, broken)]

    bound = {p.pod_uid: p.node_name for p in (e.envelope.payload for e in history.events) if isinstance(p, PodBound)}
    # The slow extender's answer (n0 is full) came too late and was ignored: n0 took pods.
    assert set(bound) == {p.metadata.uid for p in [*plain, *gpu]}
    assert "n0" in bound.values()
    # Every pod was sent to it, and each call failed and was ignored (the scheduler's own record: a
    # call timed out under load may never reach the server's handler).
    slow_answers = _answers_of(history, slow.url)
    assert {uid for uid, _ in slow_answers} >= {p.metadata.uid for p in [*plain, *gpu]}
    assert all(a.error and a.ignored for _, a in slow_answers)
    # managedResources: only the gpu pods reach the gpu extenders, in order, and a node the first
    # one rejected is not sent to the second.
    assert {body["Pod"]["metadata"]["name"] for _, body in cache.calls} == {"gpu0", "gpu1", "gpu2"}
    assert {body["Pod"]["metadata"]["name"] for _, body in after_cache.calls} == {"gpu0", "gpu1", "gpu2"}
    assert all("n1" not in [n["metadata"]["name"] for n in body["Nodes"]["items"]] for _, body in after_cache.calls)
    assert all(bound[p.metadata.uid] not in {"n1", "n2"} for p in gpu)
    # The strict extender timed out: its pods' attempts failed with an error naming it.
    for p in fpga:
        number, message = ledger.messages[p.metadata.uid]
        assert number >= 1 and message is not None and broken.url in message, message
    broken_answers = _answers_of(history, broken.url)
    assert {uid for uid, _ in broken_answers} == {p.metadata.uid for p in fpga}
    assert all(a.error and not a.ignored for _, a in broken_answers)

    report = Replayer(history).run()
    assert report.divergences == [] and report.matched == report.decisions >= len(bound) + len(fpga)
    assert [len(s.calls) for s in (slow, cache, after_cache, broken)] == calls_during_run, "replay called one"


async def test_a_slow_extender_holds_up_only_the_pods_it_is_asked_about(
        berth_env: BerthTestEnv, publisher: KafkaPublisher, engine: AsyncEngine, tmp_path: Path) -> None:
    nodes = [MakeNode().name(f"n{i}").label("kubernetes.io/hostname", f"n{i}").capacity(cpu="8", memory="16Gi",
                                                                                        pods="110").obj()
             for i in range(4)]
    gpu = [MakePod().name(f"gpu{i}").uid(f"uid-gpu{i}").res({"cpu": "100m", "example.com/gpu": 1}).obj()
           for i in range(3)]
    plain = [MakePod().name(f"p{i:02}").uid(f"uid-p{i:02}").req(cpu="100m").obj() for i in range(30)]
    # Each call takes 3 s (well within the timeout), and only gpu pods are sent to it.
    with running("full_node", full={"n0"}, delay=3.0) as slow:
        async def feed() -> None:
            # The gpu pods come first: each waits on the extender while the plain pods behind it flow.
            await publish_cluster(publisher, ClusterInput(nodes=nodes, pods=gpu))
            await asyncio.sleep(0.5)
            await publish_cluster(publisher, ClusterInput(pods=plain))

        _, history = await _run(berth_env, engine, tmp_path, {
            "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "extenders": [{"urlPrefix": slow.url, "filterVerb": "filter", "httpTimeout": "20s",
                           "managedResources": [{"name": "example.com/gpu", "ignoredByScheduler": True}]}]}, feed)
        calls_during_run = len(slow.calls)

    at: dict[str, Any] = {}
    bound: dict[str, str] = {}
    for e in history.events:
        p = e.envelope.payload
        if isinstance(p, PodBound):
            bound[p.pod_uid] = p.node_name
            at.setdefault(p.pod_uid, e.envelope.timestamp)
    assert set(bound) == {p.metadata.uid for p in [*gpu, *plain]}
    assert all(bound[p.metadata.uid] != "n0" for p in gpu)  # the extender's full node
    # Every plain pod was bound while the gpu pods still waited on the extender.
    first_gpu = min(at[p.metadata.uid] for p in gpu)
    assert max(at[p.metadata.uid] for p in plain) < first_gpu
    late = [p for p in (e.envelope.payload for e in history.events) if isinstance(p, LateBatchDecided)]
    assert late, "the gpu pods' cycle was decided after the plain pods' cycles"

    report = Replayer(history).run()
    assert report.divergences == [] and report.matched == report.decisions >= len(bound)
    for gpu_pod in gpu:  # explain re-makes a late cycle's pick on the view it was decided on
        explained = explain_attempt(history, f"default/{gpu_pod.metadata.name}")
        assert explained.replayed == explained.recorded == outcome_text(bound[gpu_pod.metadata.uid], None)
    assert len(slow.calls) == calls_during_run
