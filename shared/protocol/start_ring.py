"""Where a batch's pods start walking the nodes: upstream's round-robin start
(nextStartNodeIndex), for batches that are out at the filter workers at the same time.

In-process, each pod starts where the walk of the one before it ended. A batch's pods all start at
the batch's one start, so the nodes they walked are one window, as long as their longest walk, and
the next batch starts where that window ended: one batch after another, the windows tile the node
order, as one pod's walk after another does in-process, and a batch of one pod (always so in
lockstep) moves the start as upstream's pod does. (Moved by the sum of its pods' walks instead, as
if each had started where the one before ended, a batch of 1,024 pods walking 500 of 5,000 nodes
moved the start by 2,000: successive windows then came back to the same few blocks of nodes and
never walked the others, and SchedulingBasic's 50,000 pods left 1,000 of the 5,000 nodes empty and
others with 22.) A batch sent while others are still out would start where they started: the same
windows, on the same view, give the same picks, and where pods exclude one another (anti-affinity,
one pod per node) one of each pair is refused and tried again. So a batch sent while others are
out starts where they are expected to end: a window of the nodes a pod has walked lately past
each batch out.

That estimate can land inside a window a batch not yet decided walks (one out, or the one being
decided as the next is sent): the pods of both would pick among the same nodes on views that lack
each other's picks. So a batch whose start falls in such a window starts just past it instead. A
window is the batch's longest walk once it is answered, the nodes a pod has walked lately until
then (walks grow where nodes are full). Where the windows leave no room, the estimate stands.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from .moving_average import moving_average

SMOOTHING = 0.25
"""Weight of the latest batch in the nodes-walked-per-pod estimate."""

FORGET_AFTER = 64
"""A window still undecided after this many later batches is forgotten: its batch was given up
(the queue says so on every path it knows of; this bounds any it does not)."""


class _Window(NamedTuple):
    start: int
    nodes: int
    sent: int
    """The number of the reservation that sent its batch."""


@dataclass
class StartRing:
    next: int = 0
    """Where the next batch starts when none is out: the end of the last batch's window."""
    walked_per_pod: float = 0.0
    """Nodes a pod's walk advanced the start by, on average over the recent batches."""
    _out: dict[str, int] = field(default_factory=dict)
    """Nodes each batch out is expected to walk, by batch id."""
    _undecided: dict[str, _Window] = field(default_factory=dict)
    """The window of each batch sent and not yet decided, by batch id."""
    _reserved: int = 0
    """Reservations so far."""

    def reserve(self, batch_id: str, pods: int, num_nodes: int) -> int:
        """The start for a batch being sent, reserving the walks it is expected to take."""
        start = (self.next + sum(self._out.values())) % num_nodes if self._out and num_nodes else self.next
        self._out[batch_id] = round(self.walked_per_pod) if pods else 0
        self._reserved += 1
        for old in [b for b, w in self._undecided.items() if w.sent <= self._reserved - FORGET_AFTER]:
            del self._undecided[old]
        width = round(self.walked_per_pod)
        start = self._clear(start, width, num_nodes)
        self._undecided[batch_id] = _Window(start, width, self._reserved)
        return start

    def _clear(self, start: int, width: int, num_nodes: int) -> int:
        """`start`, or just past the undecided windows it overlaps; `start` if they leave no room."""
        if not num_nodes or width <= 0:
            return start
        moved = start
        for _ in range(len(self._undecided) + 1):
            blocking = next((w for w in self._undecided.values() if _overlap(moved, width, w, num_nodes)), None)
            if blocking is None:
                return moved
            moved = (blocking.start + blocking.nodes) % num_nodes
        return start

    def release(self, batch_id: str) -> None:
        """The batch is back (or was given up): its reservation ends."""
        self._out.pop(batch_id, None)

    def decided(self, batch_id: str) -> None:
        """The batch's pods are decided (or it was given up): views from now on hold its picks."""
        self._undecided.pop(batch_id, None)

    def advance(self, walked: list[int], num_nodes: int, batch_id: str = "") -> None:
        """A batch's answers are merged: the walks of its pods that move the start (the nodes each
        processed) move it by the longest, the batch's window, which `batch_id`'s is then while it
        is not decided."""
        if walked and num_nodes:
            self.next = (self.next + max(walked)) % num_nodes
        window = self._undecided.get(batch_id)
        if window is not None and walked:
            self._undecided[batch_id] = window._replace(nodes=max(walked))
        if walked:
            self.walked_per_pod = moving_average(self.walked_per_pod, sum(walked) / len(walked), SMOOTHING)


def _overlap(start: int, nodes: int, w: _Window, num_nodes: int) -> bool:
    """Whether `nodes` nodes from `start` share one with `w` on a ring of `num_nodes` nodes."""
    if not nodes or not w.nodes:
        return False
    return (w.start - start) % num_nodes < nodes or (start - w.start) % num_nodes < w.nodes
