"""A batch whose decision fails part-way: the pods of the slices decided before stay where their
decisions put them, the rest go back to the queue, and the driver pauses before its next round."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from services.queue import drivers
from services.queue.cycles import Attempt
from services.queue.drivers import DECIDE_SLICE, Pipelined
from services.queue.gather import Gatherer
from services.queue.metrics import SchedulerMetrics
from services.queue.scheduler import Scheduler
from services.runtime.scheduler_config import profiles_from
from shared.cluster import ClusterView
from shared.events import NodeUpserted, OutgoingEvent, PodSubmitted, envelope
from shared.protocol.batch import Decision
from shared.protocol.sharded import MergedFilter
from tests.unit.events.samples import make_node
from tests.unit.preemption.support import make_pod
from tests.unit.queue.support import answering

PAUSE_S = 0.2


async def _publish(events: Sequence[OutgoingEvent]) -> None:
    return None


async def test_a_failed_slice_requeues_only_the_undecided_pods_then_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(drivers, "FAILED_CYCLE_PAUSE_S", PAUSE_S)
    view = ClusterView()
    view.apply(envelope(NodeUpserted(node=make_node("node-a", cpu="4")), producer="t"))
    names = [f"p{i:02d}" for i in range(DECIDE_SLICE + 8)]
    for name in names:
        view.apply(envelope(PodSubmitted(pod=make_pod(name, cpu="1", priority=0)), producer="t"))
    s = Scheduler(view, profiles_from(None), Gatherer(), _publish, SchedulerMetrics(CollectorRegistry()))
    s.start_live()
    batch = s.pop_batch()
    assert batch is not None and len(batch) == len(names)
    stopping = asyncio.Event()

    # Every pod's walk failed with an error: deciding it parks it as unschedulable.
    answered = answering(s, lambda: MergedFilter(error="walk failed"))

    decide, calls = s.decide, []

    def second_slice_fails(attempts: list[Attempt], *args: Any, **kwargs: Any) -> list[Decision]:
        calls.append(len(attempts))
        if len(calls) == 2:
            stopping.set()
            raise RuntimeError("a plugin raised")
        return decide(attempts, *args, **kwargs)

    monkeypatch.setattr(s, "evaluate", answered)
    monkeypatch.setattr(s, "decide", second_slice_fails)
    started = time.monotonic()
    await Pipelined(s).run(batch, stopping)
    elapsed = time.monotonic() - started
    assert calls == [DECIDE_SLICE, 8]

    pending = s.queue.pending_pods()
    active = {q.pod_info.name for q in pending.active}
    waiting = {q.pod_info.name for q in [*pending.unschedulable, *pending.backoff]}
    assert active == set(names[DECIDE_SLICE:])
    assert waiting == set(names[:DECIDE_SLICE])
    assert elapsed >= PAUSE_S
