"""Where a batch's pods start walking the nodes: upstream's round-robin start
(nextStartNodeIndex), for batches that are out at the filter workers at the same time.

One batch at a time, a batch starts where the walks of the one before it ended, as the in-process
scheduler's pods do. A batch sent while others are still out would start where they started: the
same windows of nodes, on the same view, give the same picks, and where pods exclude one another
(anti-affinity, one pod per node) one of each pair is refused and tried again. So a batch sent
while others are out starts where they are expected to end: the nodes a pod has walked lately,
times the pods out. Nothing changes when no other batch is out (always so in lockstep).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .moving_average import moving_average

SMOOTHING = 0.25
"""Weight of the latest batch in the nodes-walked-per-pod estimate."""


@dataclass
class StartRing:
    next: int = 0
    """Where the next batch starts when none is out: the sum of the walks so far, modulo the nodes."""
    walked_per_pod: float = 0.0
    """Nodes a pod's walk advanced the start by, on average over the recent batches."""
    _out: dict[str, int] = field(default_factory=dict)
    """Nodes each batch out is expected to walk, by batch id."""

    def reserve(self, batch_id: str, pods: int, num_nodes: int) -> int:
        """The start for a batch being sent, reserving the walks it is expected to take."""
        start = (self.next + sum(self._out.values())) % num_nodes if self._out and num_nodes else self.next
        self._out[batch_id] = round(pods * self.walked_per_pod)
        return start

    def release(self, batch_id: str) -> None:
        """The batch is back (or was given up): its reservation ends."""
        self._out.pop(batch_id, None)

    def advance(self, walked: list[int], num_nodes: int) -> None:
        """A batch's answers are merged: each pod's walk that moves the start moves it by the nodes
        it processed."""
        for n in walked:
            self.next = (self.next + n) % num_nodes
        if walked:
            self.walked_per_pod = moving_average(self.walked_per_pod, sum(walked) / len(walked), SMOOTHING)
