"""What one scheduling cycle carries, and the steps that run it: the pods' attempts, the batch as the
workers answered it, and the scheduler's steps that both the drivers (`drivers.py`) and the cycles
waiting for extenders (`extender_cycles.py`) call. Each of those two sees the scheduler through a
protocol of its own that extends these steps (`DriverHost`, `ExtenderHost`), so neither depends on
`scheduler.py`, which builds both.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Protocol

from shared.events import Assumed, ExtenderAnswer
from shared.framework.pod_info import PodInfo
from shared.framework.runtime import Framework
from shared.framework.snapshot import Snapshot
from shared.protocol.batch import Decision
from shared.protocol.raw_scores import RawScores
from shared.protocol.sharded import MergedFilter
from shared.protocol.shared_totals import SharedTotals
from shared.queue import QueuedPodInfo

from .starts import QueueStarts


@dataclass
class Evaluated:
    """A cycle's pods as the workers answered: merged filter results and raw scores."""

    batch_id: str
    snapshot: Snapshot
    watermark: dict[str, list[int]]
    assumed: list[Assumed]
    merged: list[MergedFilter]
    raw: dict[str, RawScores]
    start: int = 0
    proposed: bool = False
    """The workers were asked to propose this batch."""
    off_view: bool = False
    """A worker answered from a view other than the request's watermark: every pod is re-checked
    where it goes, as in a batch decided on a view that moved."""
    generation: int | None = None
    """The view's generation mark (`generation_mark`) when the request was made: a node whose
    NodeInfo is older passed or failed in the walks on the view the decision sees."""


@dataclass
class Attempt:
    """One pod's scheduling attempt: its queue entry, its profile, its count and seed."""

    qpi: QueuedPodInfo
    info: PodInfo
    fwk: Framework
    number: int
    seed: int
    attempt_id: str
    started: float
    cycle: int
    """The scheduling queue's cycle once the pod's batch was popped (no event comes between the
    pops of one batch): moves after it send the pod to backoff."""


class Gate(Protocol):
    """Holds the view's folding back while a cycle runs (the log follower)."""

    def pause(self) -> None: ...

    def resume(self) -> None: ...


class CycleSteps(Protocol):
    """The steps of a cycle that the drivers and the extenders' cycles both call: ask the workers,
    mark the view, decide on it, publish, or give the pods back; and `starts`, told when a batch is
    decided or given up."""

    starts: QueueStarts
    """Where walks start; told when a batch is decided or given up."""

    async def evaluate(self, attempts: list[Attempt], stopping: asyncio.Event) -> Evaluated | None: ...

    def view_mark(self) -> tuple[dict[str, list[int]], list[Assumed]]: ...

    def decide(self, attempts: list[Attempt], merged: list[MergedFilter], evaluated: Evaluated,
               answers: dict[str, list[ExtenderAnswer]], watermark: dict[str, list[int]], assumed: list[Assumed],
               *, placed_before: bool = False, measured: bool = True,
               shared: SharedTotals | None = None) -> list[Decision]: ...

    async def flush(self) -> None: ...

    def requeue(self, attempts: list[Attempt]) -> None: ...
