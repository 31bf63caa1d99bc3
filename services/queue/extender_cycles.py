"""Pods a scheduler extender filters or prioritizes (HTTP, KEP-1819). The calls block, so pipelined,
such pods get a cycle of their own that waits for the answers off the loop (the other pods' cycles
go on meanwhile) and is decided between two cycles once every answer is in, on the view as it is
then, recorded first so that replay decides on the same. Lockstep asks inside its one cycle."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from shared.events import DECISIONS, Assumed, Envelope, ExtenderAnswer, ExtendersAnswered, envelope
from shared.framework.pod_info import PodInfo
from shared.framework.snapshot import Snapshot
from shared.protocol.extending import apply_filters, ask, wants
from shared.protocol.sharded import MergedFilter
from shared.scheduler.schedule_one import FilterExtender

from .cycles import Attempt, CycleSteps, Evaluated

log = logging.getLogger(__name__)

EXTENDER_CALLS = 64
"""Extender calls in flight at once (threads: the HTTP client blocks)."""


class ExtenderHost(CycleSteps, Protocol):
    """What the cycles waiting for extenders need of the scheduler besides the shared steps: to
    record the view a late decision is made on (`record_late`) and publish the extenders' answers
    (`emit`, under its `producer`)."""

    producer: str

    def record_late(self, batch_id: str, watermark: dict[str, list[int]], assumed: list[Assumed]) -> None: ...

    def emit(self, topic: str, env: Envelope) -> None: ...


class ExtenderCycles:
    def __init__(self, scheduler: ExtenderHost, extenders: Sequence[FilterExtender], wake: Callable[[], None]) -> None:
        """`wake`: the queue's loop has answered cycles to decide."""
        self.s, self._wake = scheduler, wake
        self.extenders = list(extenders)
        self._pool: ThreadPoolExecutor | None = None
        self.waiting: set[str] = set()
        """Pods whose cycle waits for their extenders' answers, by uid."""
        self._cycles: set[asyncio.Future[None]] = set()
        """Cycles waiting for their extenders' answers."""
        self._answered: list[tuple[list[Attempt], Evaluated, dict[str, list[ExtenderAnswer]]]] = []
        """Cycles whose extenders answered, waiting to be decided between two cycles."""

    def wanted_by(self, info: PodInfo) -> bool:
        """Whether an extender filters or prioritizes the pod."""
        return bool(self.extenders) and wants(self.extenders, info)

    def wanted_by_any(self, attempts: Sequence[Attempt]) -> bool:
        """Whether an extender filters or prioritizes any of the pods (none is looked at without
        extenders: this is asked for every batch)."""
        return bool(self.extenders) and any(wants(self.extenders, a.info) for a in attempts)

    def split_off(self, attempts: list[Attempt], stopping: asyncio.Event) -> list[Attempt]:
        """Start the cycles of the pods an extender wants; the others, to be scheduled now."""
        if not self.extenders:
            return attempts
        asking = [wants(self.extenders, a.info) for a in attempts]
        if any(asking):
            self._start([a for a, w in zip(attempts, asking) if w], stopping)
            attempts = [a for a, w in zip(attempts, asking) if not w]
        return attempts

    def _start(self, attempts: list[Attempt], stopping: asyncio.Event) -> None:
        self.waiting.update(a.info.uid for a in attempts)
        task = asyncio.ensure_future(self._cycle(attempts, stopping))
        self._cycles.add(task)
        task.add_done_callback(self._cycles.discard)

    async def _cycle(self, attempts: list[Attempt], stopping: asyncio.Event) -> None:
        """Filter the pods now and ask their extenders; the loop decides them once every answer is
        in (`decide_answered`)."""
        s = self.s
        evaluated: Evaluated | None = None
        try:
            evaluated = await s.evaluate(attempts, stopping)
            if evaluated is None:
                return
            answers = await self.ask_extenders(attempts, evaluated.merged, evaluated.snapshot, evaluated.batch_id)
        except BaseException as exc:
            if evaluated is not None:
                s.starts.decided(evaluated.batch_id)  # given up: no decision will come
            if isinstance(exc, asyncio.CancelledError):
                raise
            log.exception("queue: a cycle waiting for extenders failed; its pods go back to the queue")
            self.waiting.difference_update(a.info.uid for a in attempts)
            s.requeue(attempts)
            return
        self._answered.append((attempts, evaluated, answers))
        self._wake()

    async def decide_answered(self) -> None:
        """Decide the cycles whose extenders answered, in the order they did, on the view as it is
        now; the watermark and assumptions used are recorded first, so replay decides on the same."""
        if not self._answered:
            return
        s = self.s
        ready, self._answered = self._answered, []
        for attempts, evaluated, answers in ready:
            watermark, assumed = s.view_mark()
            s.record_late(evaluated.batch_id, watermark, assumed)
            # The view moved on since the shards filtered: every pod is re-checked where it goes.
            self.waiting.difference_update(a.info.uid for a in attempts)
            try:
                s.decide(attempts, evaluated.merged, evaluated, answers, watermark, assumed, placed_before=True,
                         measured=False)
            except Exception:
                log.exception("queue: deciding a cycle that waited for extenders failed; its undecided pods go back")
                s.requeue(attempts)
            finally:
                s.starts.decided(evaluated.batch_id)
        await s.flush()

    async def ask_extenders(self, attempts: list[Attempt], merged: list[MergedFilter], snapshot: Snapshot,
                            batch_id: str) -> dict[str, list[ExtenderAnswer]]:
        """Every interested pod's extenders, the pods at the same time (one waiting on a slow
        extender does not hold up another's call); the answers are applied and recorded."""
        asking = [(a, m) for a, m in zip(attempts, merged)
                  if m.feasible and not m.error and self.wanted_by(a.info)]
        if not asking:
            return {}
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=EXTENDER_CALLS, thread_name_prefix="extender")
        loop = asyncio.get_running_loop()
        calls = [loop.run_in_executor(self._pool, ask, self.extenders, a.info,
                                      [info for info in (snapshot.get(n) for n in m.feasible) if info is not None])
                 for a, m in asking]
        out: dict[str, list[ExtenderAnswer]] = {}
        for (a, m), answers in zip(asking, await asyncio.gather(*calls)):
            apply_filters(m, answers)
            out[a.info.uid] = answers
            answered = ExtendersAnswered(batch_id=batch_id, pod_uid=a.info.uid, answers=answers)
            self.s.emit(DECISIONS, envelope(answered, producer=self.s.producer, correlation_id=a.attempt_id))
        return out

    def close(self) -> None:
        """Cancel the cycles waiting; calls under way finish on their own (bounded by httpTimeout),
        none is waited for."""
        for task in list(self._cycles):
            task.cancel()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
