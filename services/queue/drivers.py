"""How the queue runs its cycles: two drivers over one `Scheduler`.

- `Lockstep`: one pod in flight at a time, its outcome (bind, or preemption's evictions and
  nomination) awaited before the next pod is popped, on the simulator's logical clock; when the
  queue runs dry, waiting pods are brought back as the simulator brings them back. Its decisions
  equal `berth simulate`'s on the same input.
- `Pipelined`: batches of pods at the workers (at most one per known filter worker, two with one, as
  many as keep the queue busy) while the batch before them is merged and decided; a batch whose view
  moved on since its request is decided on the view as it is then (LateBatchDecided), every pod
  re-checked where it goes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Protocol

from shared.cluster import ClusterView
from shared.events import Assumed
from shared.framework.pod_info import PodInfo
from shared.protocol.shared_totals import SharedTotals
from shared.queue import FakeClock, QueuedPodInfo, SchedulingQueue
from shared.queue.clock import MonotonicClock
from shared.scheduler.fit_error import FitError
from shared.scheduler.queue_rules import FailedAt, bring_back

from .admissions import Admissions
from .cycles import Attempt, CycleSteps, Evaluated, Gate
from .depth import DepthGauge
from .extender_cycles import ExtenderCycles
from .gather import Gatherer
from .metrics import SchedulerMetrics

Ahead = deque[tuple[list[Attempt], asyncio.Future[Evaluated | None]]]

log = logging.getLogger(__name__)

DECIDE_SLICE = 32
"""Pods decided between two yields to the event loop while a batch is decided."""
FAILED_CYCLE_PAUSE_S = 0.5


class DriverHost(CycleSteps, Protocol):
    """What the drivers need of the scheduler besides the shared steps: its queue, clock and view
    (and the gate that holds the view still), the pods it holds back or awaits, the parts beside
    it (admissions, the extenders' cycles, the gatherer, metrics), how deep its pipeline may go,
    and the steps around a cycle: popping a batch, making its attempts, marking a late decision,
    putting pods back, the upkeep between cycles."""

    awaiting: Callable[[], bool] | None
    """Lockstep: whether the last attempt's outcome is in (None: nothing awaited)."""

    queue: SchedulingQueue
    clock: FakeClock | MonotonicClock
    view: ClusterView
    gate: Gate | None
    cycle: int
    admissions: Admissions
    failed_at: FailedAt
    extender_cycles: ExtenderCycles
    gatherer: Gatherer
    metrics: SchedulerMetrics
    pipeline_depth: int
    pipeline_most: int
    queued: dict[str, PodInfo]
    parked: dict[str, QueuedPodInfo]
    preemptions: dict[str, tuple[FitError, Attempt, str]]

    def pop_batch(self) -> list[QueuedPodInfo] | None: ...

    def attempts_of(self, batch: list[QueuedPodInfo]) -> list[Attempt]: ...

    def mark_late(self, evaluated: Evaluated, watermark: dict[str, list[int]], assumed: list[Assumed]) -> bool: ...

    def put_back(self, infos: Iterable[PodInfo]) -> None: ...

    def release_unanswered(self) -> None: ...

    async def between_cycles(self) -> None: ...


class Driver(Protocol):
    idle_s: float
    """How long the loop sleeps when nothing can be popped, unless woken."""

    def ready(self) -> bool:
        """Whether pods may be popped now (the queue's timed moves are made here)."""
        ...

    def refill(self) -> bool:
        """The queue ran dry: bring waiting pods back if that can change anything."""
        ...

    def upkeep(self) -> None:
        """Work between cycles."""
        ...

    async def run(self, batch: list[QueuedPodInfo], stopping: asyncio.Event) -> None:
        """Schedule the popped pods (and, pipelined, those popped after them)."""
        ...


class Lockstep:
    idle_s = 1.0

    def __init__(self, scheduler: DriverHost) -> None:
        self.s = scheduler

    def ready(self) -> bool:
        s = self.s
        if s.admissions.pending():
            return False  # `berth simulate` counts a pod created on a node from its submission
        if s.parked or s.preemptions or s.awaiting:
            if s.awaiting is None or not s.awaiting():
                return False
            s.awaiting = None
            return self.ready()
        return True

    def refill(self) -> bool:
        """As the simulator does when its queue runs dry: a retry helps only pods that failed
        before the cluster last changed, and time passing is jumped over in one step."""
        s = self.s
        pending = (uid for uid in s.queued if uid not in s.parked)
        if not s.failed_at.stale(pending, s.view.version):
            return False
        s.failed_at.renew(s.view.version)
        assert isinstance(s.clock, FakeClock)
        bring_back(s.queue, s.clock)
        return True

    def upkeep(self) -> None:
        pass

    async def run(self, batch: list[QueuedPodInfo], stopping: asyncio.Event) -> None:
        s = self.s
        if s.gate is not None:
            s.gate.pause()  # the cycle decides on the view its requests' watermark names
        try:
            await self._cycle(batch, stopping)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("queue: cycle %d failed; its undecided pods go back to the queue", s.cycle)
            s.put_back(qpi.pod_info for qpi in batch)
            await asyncio.sleep(FAILED_CYCLE_PAUSE_S)
        finally:
            if s.gate is not None:
                s.gate.resume()

    async def _cycle(self, batch: list[QueuedPodInfo], stopping: asyncio.Event) -> None:
        """One pod, its extenders asked inside the cycle, as `berth simulate` does."""
        s = self.s
        started = time.perf_counter()
        attempts = s.attempts_of(batch)
        evaluated = await s.evaluate(attempts, stopping)
        if evaluated is None:
            return
        try:
            answers = await s.extender_cycles.ask_extenders(attempts, evaluated.merged, evaluated.snapshot,
                                                            evaluated.batch_id)
            try:
                late = s.mark_late(evaluated, evaluated.watermark, evaluated.assumed)
                s.decide(attempts, evaluated.merged, evaluated, answers, evaluated.watermark, evaluated.assumed,
                         placed_before=late)
            finally:
                await s.flush()
        finally:
            s.starts.decided(evaluated.batch_id)
        log.debug("queue: cycle %d, %d pods in %.1f ms", s.cycle, len(attempts), (time.perf_counter() - started) * 1000)


class Pipelined:
    idle_s = 0.05

    def __init__(self, scheduler: DriverHost) -> None:
        self.s = scheduler
        self.gauge = DepthGauge(most=scheduler.pipeline_most)

    def ready(self) -> bool:
        self.s.queue.flush_backoff_q_completed()
        self.s.queue.flush_unschedulable_pods_left_over()
        return True

    def refill(self) -> bool:
        return False  # time passes by itself here: backoff and the unschedulable timeout run on the clock

    def upkeep(self) -> None:
        if self.s.preemptions:
            self.s.release_unanswered()

    def depth(self) -> int:
        """Batches kept at the workers: the setting, or (0) as many as keep the queue busy, at most
        one per worker known (two with one) and `pipeline_most` (`DepthGauge`)."""
        return self.s.pipeline_depth or self.gauge.depth(self.s.gatherer.dispatcher.workers())

    async def run(self, batch: list[QueuedPodInfo], stopping: asyncio.Event) -> None:
        """Cycles one after another, up to `depth()` batches at the workers while the batch before
        them is merged and decided (the queue's CPU and the workers' overlap, and a worker has
        the next request in hand as it answers one)."""
        s = self.s
        ahead: Ahead = deque()
        first = self._begin(batch, stopping)
        if first is not None:
            ahead.append(first)
        try:
            while ahead and not stopping.is_set():
                self._top_up(ahead, stopping)
                attempts, task = ahead.popleft()
                try:
                    evaluated = await self._answers(task)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("queue: cycle %d failed; its pods go back to the queue", s.cycle)
                    s.requeue(attempts)
                    await asyncio.sleep(FAILED_CYCLE_PAUSE_S)
                    return
                if self._top_up(ahead, stopping):
                    await asyncio.sleep(0)  # let its request go out before this batch is decided
                deciding = time.perf_counter()
                if evaluated is not None:
                    await self._decide_now(attempts, evaluated)
                await s.between_cycles()
                self.gauge.decided(time.perf_counter() - deciding)
        finally:
            for attempts, task in ahead:
                task.cancel()
                answered = task.result() if task.done() and not task.cancelled() and task.exception() is None else None
                if answered is not None:
                    s.starts.decided(answered.batch_id)  # answered, never decided
                s.requeue(attempts)

    async def _answers(self, task: asyncio.Future[Evaluated | None]) -> Evaluated | None:
        """The batch's answers, counting the time the queue was off the CPU meanwhile: the loop
        also folds the log and sends the next batches while it waits, and that is the queue's
        busy time, not waiting (`berth_queue_answer_wait_seconds`)."""
        if task.done():
            return task.result()
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return await task
        finally:
            idle = (time.perf_counter() - wall) - (time.thread_time() - cpu)
            self.s.metrics.answer_wait_seconds.inc(max(0.0, idle))

    def _top_up(self, ahead: Ahead, stopping: asyncio.Event) -> bool:
        """Send batches until `depth()` are at the workers; True if one was sent."""
        sent = False
        while len(ahead) < self.depth():
            following = self.s.pop_batch()
            if not following:
                break
            begun = self._begin(following, stopping)
            if begun is not None:
                ahead.append(begun)
                sent = True
        return sent

    def _begin(self, batch: list[QueuedPodInfo], stopping: asyncio.Event,
               ) -> tuple[list[Attempt], asyncio.Future[Evaluated | None]] | None:
        s = self.s
        attempts = s.extender_cycles.split_off(s.attempts_of(batch), stopping)
        if not attempts:
            return None
        sent = time.perf_counter()
        task = asyncio.ensure_future(s.evaluate(attempts, stopping))

        def answered(done: asyncio.Future[Evaluated | None]) -> None:
            # Only a batch the workers answered: a cancelled, failed or nodeless one says nothing.
            if not done.cancelled() and done.exception() is None and done.result() is not None:
                self.gauge.answered(time.perf_counter() - sent)

        task.add_done_callback(answered)
        return attempts, task

    async def _decide_now(self, attempts: list[Attempt], evaluated: Evaluated) -> None:
        """Decide an evaluated batch on the view as it is, the log follower held back meanwhile;
        the loop is given back every few pods, so the next batch's answers keep arriving."""
        s = self.s
        if s.gate is not None:
            s.gate.pause()
        undecided = 0  # where the slice being decided starts
        failed = False
        try:
            watermark, assumed = s.view_mark()
            placed_before = s.mark_late(evaluated, watermark, assumed)
            # The follower is held back, so the view's nodes stay as they are across the slices.
            shared = SharedTotals()
            for undecided in range(0, len(attempts), DECIDE_SLICE):
                part = slice(undecided, undecided + DECIDE_SLICE)
                decided = s.decide(attempts[part], evaluated.merged[part], evaluated, {}, watermark, assumed,
                                   placed_before=placed_before, shared=shared)
                placed_before = placed_before or any(d.verdict == "bind" for d in decided)
                await asyncio.sleep(0)
        except Exception:
            log.exception("queue: deciding cycle %s failed; its undecided pods go back", evaluated.batch_id)
            # The slices before were decided: their pods are where their decisions put them (a
            # pod found unschedulable waits for a cluster event or its backoff, not for this).
            s.requeue(attempts[undecided:])
            failed = True
        finally:
            s.starts.decided(evaluated.batch_id)
            if s.gate is not None:
                s.gate.resume()
            await s.flush()
        if failed:
            # As after a failed cycle's request: a pod that fails its decision every time is not
            # popped again at once, round after round.
            await asyncio.sleep(FAILED_CYCLE_PAUSE_S)
