"""Replay against a real recorded run: the scheduling services as processes, two filter workers,
thousands of pods with affinity, spread, taints and three priorities (so preemption happens), and
nodes shrunk while binds are in flight (so the binder rejects some). Replaying the event store must
re-make every decision as recorded; a what-if with one plugin's weight changed must report changes
named after score plugins; explain must agree with what the distributed run decided."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest
from aiohttp.test_utils import TestClient, TestServer
from sqlalchemy.ext.asyncio import AsyncEngine

from berth.bench.ledger import read_ledger
from berth.cli import main
from berth.describe_cmd import render as describe_render
from berth.fleet import Fleet
from services.gateway.app import build_app
from services.gateway.settings import GatewaySettings
from shared.adapters.history import history_from_export, history_from_kafka, history_from_store
from shared.adapters.kafka import KafkaPublisher
from shared.binding.admission import is_admission
from shared.events import (
    BindRejected,
    NodeUpserted,
    OutgoingEvent,
    PodBound,
    PodDeleted,
    PodEvicted,
    PodSubmitted,
    SchedulingAttempted,
    envelope,
)
from shared.model.loader import load_objects
from shared.replay.diff import verdicts
from shared.replay.engine import Replayer, ReplayReport
from shared.replay.explain import explain_attempt, explain_now
from shared.replay.export_format import export_line
from shared.replay.history import History
from shared.replay.rebuild import LogFolder

from .cluster_run import admitted, attempted, fleet_for, projection_caught_up, run_fleet, settle, waves_of
from .fixtures import BerthTestEnv
from .scheduler_cluster import publish_cluster, scenario_docs, with_uids

pytestmark = pytest.mark.integration

WEIGHTED: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler", "plugins": {"score": {"enabled": [
        {"name": "NodeResourcesBalancedAllocation", "weight": 40}]}}}],
}


SHRUNK_CPU_MILLI = 250


def _shrunk(node: Any) -> Any:
    """A quarter of a cpu: too little for most binds waiting for it, while evicting the two
    low-priority pods running on it still makes room for a 250m pod (the run goes on preempting
    however few pods were decided before the shrink)."""
    allocatable = {**node.status.allocatable, "cpu": f"{SHRUNK_CPU_MILLI}m"}
    status = msgspec.structs.replace(node.status, allocatable=allocatable)
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
    cluster = with_uids(load_objects(("scenario", d) for d in scenario_docs(nodes=40, pods=3000, seed=21)))
    waves = waves_of(cluster, 3)
    fleet = fleet_for(env, tmp / "logs", filter_workers=2)
    async with run_fleet(fleet) as running:
        await publish_cluster(publisher, waves[0])
        await admitted(env, waves[0])  # the running pods are on their nodes before the binder stops
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
        return await _settled_history(env, engine, running, timeout=300)


async def _settled_history(env: BerthTestEnv, engine: AsyncEngine, running: Fleet, timeout: float) -> History:
    """Once the run has settled with no service dead: every service stopped but the projector,
    which catches up, and the event store's history."""
    await settle(env, timeout=timeout)
    assert (dead := running.dead_report()) is None, dead
    for label in [m for m in reversed(list(running.members)) if m != "projector"]:
        await asyncio.to_thread(running.stop, label)
    await projection_caught_up(env, engine, timeout=90)
    return await history_from_store(engine)


async def test_a_recorded_run_replays_exactly(
        berth_env: BerthTestEnv, publisher: KafkaPublisher, engine: AsyncEngine, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    history = await _record(berth_env, publisher, engine, tmp_path)
    payloads = [e.envelope.payload for e in history.events]
    assert sum(isinstance(p, PodEvicted) for p in payloads) > 0, "preemption happened"
    assert sum(isinstance(p, BindRejected) for p in payloads) > 0, "the binder rejected binds"
    victims = [p.uid for p in payloads if isinstance(p, PodEvicted)]
    assert len(victims) == len(set(victims)), "a pod was chosen as a victim twice"

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
    unexplained = [d for d in changes if d.plugin not in score_plugins and d.detail != earlier]
    assert unexplained == [], unexplained[:5]
    assert any(d.plugin == "NodeResourcesBalancedAllocation" for d in changes)
    # A weight cannot change a pod that fit nowhere, or fit one node only.
    assert all(d.recorded.startswith(("bound to", "retried")) for d in changes), changes[:5]

    # Explain agrees with the distributed run: the pick, and each walked node's verdict as the shards gave it.
    checked = compared = 0
    for recorded in history.decisions[::max(1, len(history.decisions) // 25)]:
        batch = history.batches.get(recorded.decision.batch_id)
        if batch is None:
            continue
        x = explain_attempt(history, recorded.decision.pod_uid, recorded.decision.attempt)
        assert x.replayed == x.recorded, (x.pod, x.attempt)
        folder = LogFolder(history)
        folder.advance_to(batch.request.watermark)  # packed answers name their nodes in this view
        shards = verdicts(batch.walks("filter", recorded.decision.pod_uid), folder.view.snapshot().names)
        for node in x.nodes:
            if node.walked and node.node in shards.nodes:
                plugin, reason = shards.nodes[node.node]
                assert node.status == ("fits" if reason == "fits" else f"{plugin}: {reason}"), (x.pod, node.node)
                compared += 1
        checked += 1
    assert checked >= 10 and compared, (checked, compared)

    _check_windows(history, report, export, capsys)
    _check_cluster_at(history, export, capsys)
    await _check_gateway(berth_env, publisher, engine, history)


async def test_a_run_with_workers_proposing_replays_exactly(
        berth_env: BerthTestEnv, publisher: KafkaPublisher, engine: AsyncEngine, tmp_path: Path) -> None:
    """Filter workers deciding their batches in order (BERTH_QUEUE_PROPOSE=1): replay proposes each
    batch again as its worker did and decides it as the queue did; explain agrees."""
    cluster = with_uids(load_objects(("scenario", d) for d in scenario_docs(nodes=30, pods=900, seed=5)))
    waves = waves_of(cluster, 2)
    fleet = fleet_for(berth_env, tmp_path / "logs", filter_workers=2)
    fleet.env["BERTH_QUEUE_PROPOSE"] = "1"
    async with run_fleet(fleet) as running:
        for wave in waves:
            await publish_cluster(publisher, wave)
            await attempted(berth_env, wave, fraction=0.5, timeout=180)
        history = await _settled_history(berth_env, engine, running, timeout=240)
    proposed = [b for b in history.batches.values() if b.proposed]
    assert len(proposed) >= len(history.batches) // 2 > 0, "the workers proposed"
    assert any(isinstance(e.envelope.payload, PodEvicted) for e in history.events), "preemption happened"

    report = Replayer(history).run()
    assert report.divergences == [], report.divergences[:5]
    assert report.decisions >= 500 and report.matched == report.decisions

    checked = scored = 0
    for recorded in history.decisions[::max(1, len(history.decisions) // 40)]:
        batch = history.batches.get(recorded.decision.batch_id)
        if batch is None or not batch.proposed:
            continue
        x = explain_attempt(history, recorded.decision.pod_uid, recorded.decision.attempt)
        assert x.replayed == x.recorded, (x.pod, x.attempt)
        if recorded.decision.node_name:
            picked = next(n for n in x.nodes if n.picked)
            assert picked.node == recorded.decision.node_name
            # The worker's ranking's scores (a pod with one feasible node is not scored, as upstream).
            scored += picked.total is not None
        checked += 1
    assert checked >= 10 and scored > 0


def _cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    capsys.readouterr()
    code = main(list(argv))
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def _check_windows(history: History, full: ReplayReport, export: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--from/--to by log position and by time: only the cycles inside are checked, all as recorded."""
    history = history_from_export(export)  # positions are the CLI's source's own order (timestamps here)
    first, last = len(history) // 3, 2 * len(history) // 3
    in_window = [b for b in history.batches.values() if first <= b.seq <= last]
    expected = sum(len(b.decisions) for b in in_window)
    windowed = _cli_json(capsys, "replay", "--source", str(export), "--from", str(first), "--to", str(last),
                         "-o", "json")
    assert windowed["divergences"] == [] and windowed["decisions"] == windowed["matched"]
    assert expected <= windowed["decisions"] < full.decisions  # plus pods retried at once (no decision recorded)
    assert windowed["preemptions"] >= sum(1 for p in history.preemptions.values()
                                          if first <= p.seq <= last and p.decided is not None)
    assert windowed["preemptions"] == windowed["preemptions_matched"]

    stamps = sorted(e.envelope.timestamp for e in history.events)
    start, end = stamps[first], stamps[last]
    by_time = _cli_json(capsys, "replay", "--source", str(export), "--from", start.isoformat(), "--to", end.isoformat(),
                        "-o", "json")
    assert by_time["divergences"] == [] and 0 < by_time["decisions"] < full.decisions


def _check_cluster_at(history: History, export: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--until T: what was bound where, what was queued, from the events stamped up to T only."""
    when = sorted(e.envelope.timestamp for e in history.events)[len(history) // 2]
    state = _cli_json(capsys, "replay", "--source", str(export), "--until", when.isoformat(), "-o", "json")
    bound: dict[str, str] = {}
    submitted: dict[str, str] = {}
    on_a_node: set[str] = set()
    """Created with spec.nodeName: admitted by their node, never in the scheduler's queue."""
    for event in history.events:
        if event.envelope.timestamp > when:
            continue
        match event.envelope.payload:
            case PodSubmitted(pod=pod):
                submitted[pod.metadata.uid] = f"{pod.metadata.namespace}/{pod.metadata.name}"
                if pod.spec.node_name:
                    on_a_node.add(submitted[pod.metadata.uid])
            case PodBound(pod_uid=uid, node_name=node):  # scheduled, or created on its node and admitted
                bound[uid] = node
            case PodEvicted(uid=uid) | PodDeleted(uid=uid):
                submitted.pop(uid, None)
    live_bound = {submitted[u]: n for u, n in bound.items() if u in submitted}
    assert {p["pod"]: p.get("node", "") for p in state["pods"] if p["phase"] == "Bound"} == live_bound
    assert {p["pod"] for p in state["queue"]} == set(submitted.values()) - set(live_bound) - on_a_node
    per_node: dict[str, int] = {}
    for node in live_bound.values():
        per_node[node] = per_node.get(node, 0) + 1
    assert {n["name"]: n["pods"] for n in state["nodes"] if n["pods"]} == per_node
    # Shrunk nodes keep the pods bound before they shrank.
    assert all(n["cpu_requested_milli"] <= n["cpu_allocatable_milli"]
               or n["cpu_allocatable_milli"] == SHRUNK_CPU_MILLI for n in state["nodes"])


async def _check_gateway(env: BerthTestEnv, publisher: KafkaPublisher, engine: AsyncEngine, history: History) -> None:
    """The gateway's events and explain endpoints, and the pod events `berth describe` prints."""
    settings = GatewaySettings(base=env.settings.for_service("gateway"), api_token="t")
    client = TestClient(TestServer(build_app(settings, publisher, engine, registry=env.registry)),
                        headers={"Authorization": "Bearer t"})
    await client.start_server()
    try:
        await _check_event_pages(client, history)
        await _check_explain_endpoint(client, history)
        await _check_describe_events(client, history)
    finally:
        await client.close()


async def _get(client: TestClient, path: str, status: int = 200) -> Any:
    resp = await client.get(path)
    assert resp.status == status, await resp.text()
    return await resp.json()


async def _check_event_pages(client: TestClient, history: History) -> None:
    url = "/apis/berth.dev/v1/events"
    page = await _get(client, f"{url}?topic=decisions&type=SchedulingAttempted&limit=100")
    assert len(page["items"]) == 100 and {i["event"]["type"] for i in page["items"]} == {"SchedulingAttempted"}
    following = await _get(client, f"{url}?topic=decisions&type=SchedulingAttempted&limit=100&after={page['next']}")
    seqs = [i["seq"] for i in page["items"] + following["items"]]
    assert seqs == sorted(set(seqs)) and following["items"]
    total = sum(isinstance(e.envelope.payload, SchedulingAttempted) for e in history.events)
    assert len(await _all(client, f"{url}?type=SchedulingAttempted")) == total

    evicted = _victim(history)
    rejected = next(e.envelope.payload for e in history.events if isinstance(e.envelope.payload, BindRejected)
                    and not is_admission(e.envelope.payload.attempt_id))
    for uid, must_have in ((evicted.uid, "PodEvicted"), (rejected.pod_uid, "BindRejected")):
        about = await _all(client, f"{url}?pod={history.pod_name(uid)}")
        types = [i["event"]["type"] for i in about]
        # The store keeps each topic in order, not the topics among themselves (a pod created on its
        # node has its admission on other topics, published at once): by the events' own times the
        # pod's story starts with its submission.
        first = min(about, key=lambda i: (datetime.fromisoformat(i["event"]["timestamp"]), i["seq"]))
        assert first["event"]["type"] == "PodSubmitted" and must_have in types, types
        expected = [e.envelope.event_id for e in history.events if _concerns(e.envelope, uid)]
        assert [i["event"]["event_id"] for i in about] == [str(x) for x in expected]

    # A watch from near the end: the remaining events as JSON Lines, then the stream ends on time.
    seqs = [i["seq"] for i in await _all(client, url)]
    assert len(seqs) == len(history)
    resp = await client.get(f"{url}?after={seqs[-4]}&follow=true&timeoutSeconds=1")
    lines = [json.loads(line) for line in (await resp.text()).splitlines()]
    assert resp.status == 200 and [line["seq"] for line in lines] == seqs[-3:]

    bad = await _get(client, f"{url}?limit=0", status=422)
    assert bad["details"]["field"] == "limit"
    assert (await _get(client, f"{url}?topic=nope", status=422))["details"]["field"] == "topic"


async def _all(client: TestClient, url: str) -> list[Any]:
    """Every item, page after page."""
    items: list[Any] = []
    after = 0
    while page := (await _get(client, f"{url}{'&' if '?' in url else '?'}after={after}&limit=1000"))["items"]:
        items += page
        after = page[-1]["seq"]
    return items


def _concerns(env: Any, uid: str) -> bool:
    return env.key == uid or any(getattr(env.payload, f, None) == uid for f in ("pod_uid", "uid", "preemptor_uid"))


async def _check_explain_endpoint(client: TestClient, history: History) -> None:
    for recorded in history.decisions[:: max(1, len(history.decisions) // 5)]:
        if recorded.decision.batch_id not in history.batches:
            continue
        ns, name = history.pod_name(recorded.decision.pod_uid).split("/")
        got = await _get(client, f"/apis/berth.dev/v1/namespaces/{ns}/pods/{name}/explain"
                                 f"?attempt={recorded.decision.attempt}")
        want = explain_attempt(history, f"{ns}/{name}", recorded.decision.attempt)
        assert got == json.loads(msgspec.json.encode(want))
        assert got["replayed"] == got["recorded"]
    pending = next(u for u in reversed(list(history.pods)) if not _was_bound(history, u))
    ns, name = history.pod_name(pending).split("/")
    now = await _get(client, f"/apis/berth.dev/v1/namespaces/{ns}/pods/{name}/explain?now=true")
    assert now == json.loads(msgspec.json.encode(explain_now(history, f"{ns}/{name}")))
    assert now["nodes"] and "at" not in now
    await _get(client, "/apis/berth.dev/v1/namespaces/default/pods/no-such-pod/explain", status=404)


def _victim(history: History) -> PodEvicted:
    """An evicted pod, one the scheduler had bound if there is one."""
    evicted = [e.envelope.payload for e in history.events if isinstance(e.envelope.payload, PodEvicted)]
    return next((p for p in evicted if _was_bound(history, p.uid)), evicted[0])


def _was_bound(history: History, uid: str) -> bool:
    """Bound by the scheduler (not a pod created on its node, which its node admitted)."""
    return any(isinstance(p := e.envelope.payload, PodBound) and p.pod_uid == uid and not is_admission(p.attempt_id)
               for e in history.events)


async def _check_describe_events(client: TestClient, history: History) -> None:
    payloads = [e.envelope.payload for e in history.events]
    evicted = _victim(history)
    rejected = next(p for p in payloads if isinstance(p, BindRejected))
    ns, name = history.pod_name(evicted.uid).split("/")
    # Deleted, the victim is gone from the API as from the API server; `berth describe` still reads
    # its history, and its events stay listed, as events outlive their pods.
    await _get(client, f"/api/v1/namespaces/{ns}/pods/{name}", status=404)
    victim = await _get(client, f"/api/v1/namespaces/{ns}/pods/{name}?events=true&includeDeleted=true")
    assert victim["schedulingEvents"][-1]["reason"] == "Preempted"
    listed = await _get(client, f"/api/v1/namespaces/{ns}/events?fieldSelector=involvedObject.name%3D{name}")
    assert listed["items"][-1]["reason"] == "Preempted" and listed["items"][-1]["type"] == "Normal"
    assert victim["schedulingEvents"][-1]["message"] == (
        f"Preempted by pod {evicted.preemptor_uid} on node {evicted.node_name}")
    assert {e["from"] for e in victim["schedulingEvents"]} == {"default-scheduler"}

    ns, name = history.pod_name(rejected.pod_uid).split("/")
    pod = await _get(client, f"/api/v1/namespaces/{ns}/pods/{name}?events=true&includeDeleted=true")
    failed = [e for e in pod["schedulingEvents"] if e["reason"] == "FailedScheduling"]
    assert any(e["message"] == f'running Bind plugin "DefaultBinder": {rejected.reason}' for e in failed)
    text = describe_render(pod, now=datetime.now(UTC))
    assert "Type     Reason" in text and "From" in text and "running Bind plugin" in text


def history_from_store_copy(history: History) -> History:
    """A second History built from the same events (nothing cached between the runs)."""
    return History(list(history.events))
