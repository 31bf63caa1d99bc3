"""How many batches the pipelined queue keeps at the filter workers.

Enough that the next batch's answer is in by the time the queue has decided the one before it,
and no more: a batch waiting behind others is decided on a view that moved further since its
request, so more of its pods are re-checked, and refused where pods decided meanwhile took their
nodes, and it waits longer itself. With the workers' round trip `out` and the queue's time to
decide a batch `decide`, `ceil(out / decide) + 1` batches out keep the queue busy; more workers
than that add nothing while the queue is the slower side.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from shared.protocol.moving_average import moving_average

SMOOTHING = 0.2
"""Weight of the latest batch in each moving average."""


@dataclass
class DepthGauge:
    out_s: float = 0.0
    """A batch's round trip at the workers, request to merged answer (moving average)."""
    decide_s: float = 0.0
    """The queue's time to decide a batch and do its upkeep (moving average)."""
    most: int = 0
    """Never more batches out than this (0: no bound but the workers')."""

    def answered(self, seconds: float) -> None:
        self.out_s = moving_average(self.out_s, seconds, SMOOTHING)

    def decided(self, seconds: float) -> None:
        self.decide_s = moving_average(self.decide_s, seconds, SMOOTHING)

    def depth(self, workers: int) -> int:
        """Batches to keep out, at most one per worker (two with one: the next request is then at
        the worker as it answers, not a fetch later) and `most`; all of those until both times are
        known, and never fewer than two where two may be out (one answered while one is decided)."""
        most = min(max(2, workers), self.most) if self.most else max(2, workers)
        if most <= 2 or not self.out_s or not self.decide_s:
            return most
        return max(2, min(most, math.ceil(self.out_s / self.decide_s) + 1))

