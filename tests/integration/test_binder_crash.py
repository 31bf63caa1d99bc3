"""The binder SIGKILLed mid-burst, after publishing outcomes whose requests it had not committed, then
restarted: every request ends with exactly one outcome, no pod is bound twice, the node is never
over-committed. And the real process serves health and metrics and stops cleanly on SIGTERM."""

from __future__ import annotations

import asyncio
import signal
import sys

import aiohttp
import pytest
from aiokafka import TopicPartition

from berth.stack.processes import free_port
from shared.adapters.kafka import KafkaPublisher, make_consumer, stop_consumer
from shared.events import BINDS, NodeUpserted, envelope

from .binder_runs import bind_request, check_invariants, node, out, outcomes_of, placements, pod, running_binder
from .fixtures import BerthTestEnv
from .helpers import ROOT, service_env

pytestmark = pytest.mark.integration
GROUP = "berth-binder"


async def _committed_binds(env: BerthTestEnv) -> int:
    consumer = make_consumer(env.settings, group_id=GROUP, client_id="inspector")
    await consumer.start()
    try:
        total = 0
        for p in range(env.registry.spec(BINDS).partitions):
            total += await consumer.committed(TopicPartition(env.registry.physical(BINDS), p)) or 0
        return total
    finally:
        await stop_consumer(consumer)


async def test_killed_mid_burst_then_restarted(berth_env: BerthTestEnv, publisher: KafkaPublisher) -> None:
    env = berth_env
    await publisher.publish([out(env, envelope(NodeUpserted(node=node(cpu="6")), producer="test"))])
    requests = [bind_request(pod(f"p{i}")) for i in range(20)]
    await publisher.publish([out(env, r) for r in requests])

    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.integration.crashing_binder",
        env=service_env(env, BERTH_KAFKA_MAX_POLL_RECORDS="4"), cwd=ROOT, stdout=asyncio.subprocess.PIPE,
    )
    stdout, _ = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == -signal.SIGKILL, stdout
    before = await placements(env)
    answered = {e.causation_id for e in before}
    assert 0 < len(answered) < len(requests), "killed mid-burst"
    assert await _committed_binds(env) < len(answered), "outcomes published, their requests not committed"

    async with running_binder(env) as handler:
        events = await outcomes_of(env, requests)
        assert handler.rebuilt >= 1
        assert sum(len(s.pods) for s in handler.state.shards.values()) == 6
        n1 = next(s.nodes["n1"] for s in handler.state.shards.values() if "n1" in s.nodes)
        assert n1.requested.milli_cpu == 6000 and len(n1.pods) == 6
    assert check_invariants(events, requests, capacity_pods=6) == {"bound": 6, "rejected": 14}
    for e in before:  # what was published before the crash still stands
        assert e in events


async def test_sigterm_stops_the_binder_cleanly(berth_env: BerthTestEnv, publisher: KafkaPublisher) -> None:
    env = berth_env
    await publisher.publish([out(env, envelope(NodeUpserted(node=node()), producer="test"))])
    request = bind_request(pod("p1"))
    await publisher.publish([out(env, request)])
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "services.binder", env=service_env(env, BERTH_HTTP_PORT=str(port)), cwd=ROOT,
    )
    try:
        await outcomes_of(env, [request])
        async with aiohttp.ClientSession() as http:
            async with http.get(f"http://127.0.0.1:{port}/readyz") as response:
                assert response.status == 200 and (await response.json())["ready"]
            async with http.get(f"http://127.0.0.1:{port}/metrics") as response:
                assert "berth_events_published_total" in await response.text()
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 15) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
