"""berth_queue_answer_wait_seconds: the time the pipelined queue waits for the answers to the batch
it decides next, with nothing else to decide; a batch answered before the queue turns to it adds
nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from prometheus_client import CollectorRegistry

from services.queue.drivers import Pipelined
from services.queue.gather import Gatherer
from services.queue.metrics import SchedulerMetrics
from services.queue.scheduler import Attempt, Evaluated, Scheduler
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


@pytest.mark.parametrize("answer_s", [ANSWER_S, 0.0])
async def test_the_wait_for_a_batch_answers_is_counted(monkeypatch: pytest.MonkeyPatch, answer_s: float) -> None:
    registry = CollectorRegistry()
    s = _queue(registry)
    answered = answering(s, lambda: MergedFilter(feasible=["node-a"]))

    async def slow(attempts: list[Attempt], stopping: asyncio.Event) -> Evaluated:
        await asyncio.sleep(answer_s)
        return await answered(attempts, stopping)

    monkeypatch.setattr(s, "evaluate", slow if answer_s else answered)
    batch = s.pop_batch()
    assert batch is not None
    await Pipelined(s).run(batch, asyncio.Event())
    assert s.view.node_of(batch[0].pod_info.uid) == "node-a"
    if answer_s:
        assert ANSWER_S * 0.8 <= _waited(registry) <= ANSWER_S * 20
    else:
        # Answered at once: the task is done by the time the queue turns to it, or nearly so.
        assert _waited(registry) < ANSWER_S
