"""berth_queue_answer_wait_seconds: the time the pipelined queue is off the CPU while the answers to
the batch it decides next are outstanding; what it does after they came (a failed cycle's pause
included) is not waiting for them."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from prometheus_client import CollectorRegistry

from services.queue import drivers
from services.queue.cycles import Attempt, Evaluated
from services.queue.drivers import Pipelined
from services.queue.gather import Gatherer
from services.queue.metrics import SchedulerMetrics
from services.queue.scheduler import Scheduler
from services.runtime.scheduler_config import profiles_from
from shared.cluster import ClusterView
from shared.events import NodeUpserted, OutgoingEvent, PodSubmitted, envelope
from shared.protocol.sharded import MergedFilter
from tests.unit.events.samples import make_node
from tests.unit.preemption.support import make_pod
from tests.unit.queue.support import answering

ANSWER_S = 0.05


async def _publish(events: Sequence[OutgoingEvent]) -> None:
    pass


def _queue(registry: CollectorRegistry) -> Scheduler:
    view = ClusterView()
    view.apply(envelope(NodeUpserted(node=make_node("node-a", cpu="4")), producer="t"))
    view.apply(envelope(PodSubmitted(pod=make_pod("web", cpu="1", priority=0)), producer="t"))
    s = Scheduler(view, profiles_from(None), Gatherer(), _publish, SchedulerMetrics(registry))
    s.start_live()
    return s


def _waited(registry: CollectorRegistry) -> float:
    return registry.get_sample_value("berth_queue_answer_wait_seconds_total") or 0.0


async def test_the_wait_for_a_batch_answers_is_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = CollectorRegistry()
    s = _queue(registry)
    answered = answering(s, lambda: MergedFilter(feasible=["node-a"]))

    async def slow(attempts: list[Attempt], stopping: asyncio.Event) -> Evaluated:
        await asyncio.sleep(ANSWER_S)  # off the CPU, as while a worker walks the batch
        return await answered(attempts, stopping)

    monkeypatch.setattr(s, "evaluate", slow)
    batch = s.pop_batch()
    assert batch is not None
    await Pipelined(s).run(batch, asyncio.Event())
    assert s.view.node_of(batch[0].pod_info.uid) == "node-a"
    assert ANSWER_S * 0.8 <= _waited(registry) <= ANSWER_S * 20


async def test_a_failed_cycle_pause_is_not_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = CollectorRegistry()
    s = _queue(registry)

    async def failing(attempts: list[Attempt], stopping: asyncio.Event) -> Evaluated:
        await asyncio.sleep(0)
        raise RuntimeError("no answers")

    monkeypatch.setattr(s, "evaluate", failing)
    batch = s.pop_batch()
    assert batch is not None
    await Pipelined(s).run(batch, asyncio.Event())  # pauses FAILED_CYCLE_PAUSE_S after the failure
    assert _waited(registry) < drivers.FAILED_CYCLE_PAUSE_S / 2
