"""Fakes, fixtures and helpers for the scheduling queue tests."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence

import pytest

from services.queue.cycles import Attempt, Evaluated
from services.queue.scheduler import Scheduler
from shared.framework import events
from shared.framework.events import ActionType, ClusterEvent
from shared.framework.interfaces import PreEnqueuePlugin
from shared.framework.pod_info import PodInfo
from shared.framework.status import Code, Status
from shared.protocol.sharded import MergedFilter
from shared.queue import FakeClock, SchedulingQueue
from tests.builders import MakePod

FIT = "NodeResourcesFit"
TAINTS = "TaintToleration"
SILENT = "SilentPlugin"  # registered for no event at all
GATES = "SchedulingGates"

EVENT_MAP: Mapping[str, Sequence[ClusterEvent]] = {
    FIT: [ClusterEvent(events.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
          ClusterEvent(events.POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN)],
    TAINTS: [ClusterEvent(events.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT)],
    SILENT: [],
    GATES: [ClusterEvent(events.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)],
    "PodTopologySpread": [ClusterEvent(events.POD, ActionType.ALL)],
    "InterPodAffinity": [ClusterEvent(events.POD, ActionType.ALL)],
}


class Gates(PreEnqueuePlugin):
    """Refuses pods that still carry scheduling gates."""

    NAME = GATES

    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        if pod.pod.spec.scheduling_gates:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for scheduling gates")
        return None


def pod(name: str, priority: int = 0, namespace: str = "default") -> PodInfo:
    return MakePod().name(name).namespace(namespace).priority(priority).info()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(1000.0)


@pytest.fixture
def queue(clock: FakeClock) -> SchedulingQueue:
    return SchedulingQueue(clock=clock, pre_enqueue_plugins=[Gates()], cluster_event_map=EVENT_MAP)


def fail(q: SchedulingQueue, name: str, *plugins: str) -> None:
    """Pop `name` (must be the head) and hand it back rejected by `plugins`."""
    qpi = q.pop()
    assert qpi is not None and qpi.pod_info.name == name
    qpi.unschedulable_plugins = set(plugins)
    assert q.add_unschedulable_if_not_present(qpi, q.scheduling_cycle)


def where(q: SchedulingQueue, name: str, namespace: str = "default") -> str:
    pending = q.pending_pods()
    for label, entries in (("active", pending.active), ("backoff", pending.backoff),
                           ("unschedulable", pending.unschedulable), ("gated", pending.gated)):
        if any(e.pod_info.key == f"{namespace}/{name}" for e in entries):
            return label
    return "none"


def answering(s: Scheduler, merged: Callable[[], MergedFilter], *,
              off_view: bool = False) -> Callable[[list[Attempt], asyncio.Event], Awaitable[Evaluated]]:
    """A stand-in for `s.evaluate` (the workers' answers, without a broker): every pod of a batch
    answered with `merged()`, on the queue's view as it is."""
    async def evaluate(attempts: list[Attempt], stopping: asyncio.Event) -> Evaluated:
        watermark, assumed = s.view_mark()
        return Evaluated("batch-1", s.view.snapshot(), watermark, assumed, [merged() for _ in attempts], {},
                         off_view=off_view)
    return evaluate
