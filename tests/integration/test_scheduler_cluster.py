"""The distributed scheduler end to end on the real broker: lockstep runs decide exactly as
`berth simulate`, and a concurrent mixed workload ends with every pod bound once or pending with an
upstream-worded reason, no node over-committed."""

from __future__ import annotations

import asyncio
import time

import pytest

from shared.adapters.kafka import KafkaPublisher
from shared.model.loader import load_objects
from shared.simulation.simulator import Simulator

from .fixtures import BerthTestEnv
from .scheduler_cluster import publish_cluster, scenario_docs, scheduling_services, with_uids

pytestmark = pytest.mark.integration

QUIET_POLLS = 10
"""Polls (0.2 s apart) the mixed run stays at rest, the cluster unchanged, before it is read."""


async def _settled(check, timeout: float, describe=lambda: "") -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"the cluster did not settle in time: {describe()}"
        await asyncio.sleep(0.2)


def _diff(actual: dict, expected: dict) -> list:
    return sorted((k, actual.get(k), v) for k, v in expected.items() if actual.get(k) != v)[:8]


def _outcomes(queue) -> dict[str, tuple[str, str | None]]:
    view, scheduler = queue.view, queue.scheduler
    out: dict[str, tuple[str, str | None]] = {}
    for uid, pod in view.specs.items():
        key = f"{pod.metadata.namespace}/{pod.metadata.name}"
        if uid in view.deleted:
            out[key] = ("Deleted", None)
        elif view.is_bound(uid):
            out[key] = ("Bound", view.placed[uid])
        else:
            out[key] = ("Pending", scheduler.last_message.get(uid))
    return out


@pytest.mark.parametrize("propose", [False, True], ids=["queue-ranks", "workers-propose"])
async def test_lockstep_decides_as_simulate(berth_env: BerthTestEnv, publisher: KafkaPublisher, propose: bool) -> None:
    cluster = with_uids(load_objects(("scenario", d) for d in scenario_docs(nodes=9, pods=70, seed=4)))
    report = Simulator(cluster, seed=0).run()
    expected = {f"{p.namespace}/{p.name}": (p.phase, p.nodeName if p.phase == "Bound" else p.message)
                for p in report.pods}
    assert {v[0] for v in expected.values()} >= {"Bound", "Pending", "Deleted"}, "scenario exercises preemption"
    await publish_cluster(publisher, cluster)
    async with scheduling_services(berth_env, lockstep=True, propose=propose) as running:
        await _settled(lambda: _outcomes(running.queue) == expected, timeout=60,
                       describe=lambda: _diff(_outcomes(running.queue), expected))


@pytest.mark.parametrize(("propose", "above_ms"), [(False, None), (True, None), (False, 0.0)],
                         ids=["queue-ranks", "workers-propose", "switching"])
async def test_mixed_workload_every_pod_bound_once_or_pending_with_reason(
        berth_env: BerthTestEnv, publisher: KafkaPublisher, propose: bool, above_ms: float | None) -> None:
    """`switching`: BERTH_QUEUE_PROPOSE=auto with no threshold, so the queue ranks until it has
    measured its ranking, then proposes all but one batch in `PROBE_EVERY`: both kinds of batch
    are out together."""
    cluster = with_uids(load_objects(("scenario", d) for d in scenario_docs(nodes=50, pods=520, seed=11)))
    await publish_cluster(publisher, cluster)
    async with scheduling_services(berth_env, filter_workers=2, propose=propose, propose_above_ms=above_ms) as running:
        queue = running.queue

        def at_rest() -> bool:
            # A pod popped for another attempt (told by preemption that it fits now) is in flight:
            # its last message is the old one until that attempt is decided. A pod that failed
            # before the cluster last changed (backing off, say) may still be placed: at rest,
            # every pending pod failed on the cluster as it is, where the simulator stops.
            s = queue.scheduler
            return bool(s.live) and not s.parked and not s.preemptions and all(
                queue.view.is_bound(uid) or uid in queue.view.deleted or uid in s.last_message
                for uid in queue.view.specs) and s.queue.active_head() is None and not s.queue.in_flight() and (
                not s.failed_at.stale(s.queued, queue.view.version))

        # Evictions decided may still be on their way when their decision is read: at rest for a
        # while, with the cluster unchanged meanwhile.
        quiet: list[int] = []

        def settled() -> bool:
            quiet[:] = [*quiet, queue.view.version][-QUIET_POLLS:] if at_rest() else []
            return len(quiet) == QUIET_POLLS and len(set(quiet)) == 1

        await _settled(settled, timeout=240)
        outcomes = _outcomes(queue)
        metrics = queue.service.metrics.registry
        sent = metrics.get_sample_value("berth_queue_batch_pods_sum") or 0.0
        proposed = metrics.get_sample_value("berth_queue_proposed_pods_total") or 0.0
    if above_ms is not None:
        assert 0 < proposed < sent, (proposed, sent)
    else:
        assert proposed == (sent if propose else 0.0), (proposed, sent)
    assert len(outcomes) == 520
    bound = [k for k, (phase, _) in outcomes.items() if phase == "Bound"]
    pending = {k: m for k, (phase, m) in outcomes.items() if phase == "Pending"}
    simulated = Simulator(cluster, seed=0).run()
    simulated_bound = sum(1 for p in simulated.pods if p.phase == "Bound")
    # Many pods in flight reorder decisions a little; the cluster fills about as far as in-process.
    assert abs(len(bound) - simulated_bound) <= simulated_bound // 10, (len(bound), simulated_bound)
    assert any(phase == "Deleted" for phase, _ in outcomes.values()), "preemption evicted someone"
    for key, message in pending.items():
        assert message is not None and message.startswith("0/50 nodes are available: "), (key, message)
        # Told it fits after all (room made by other preemptions), a pod must have gone again.
        assert not message.endswith(" now"), (key, message)
    for info in queue.view.nodes.values():
        assert info.requested.milli_cpu <= info.allocatable.milli_cpu, info.name
        assert info.requested.memory <= info.allocatable.memory, info.name
        assert len(info.pods) <= info.allocatable.allowed_pod_number, info.name
