"""Where a queue's batches start their walks (upstream's round-robin start, `StartRing`), alone or
sharing the cluster with other queues.

Alone, one ring goes round every node, as the in-process scheduler's start does. Where queues
share the cluster, each walk moves a start by hundreds of nodes, so a start that went round every
node would cross the other queues' within a few pods: their walks would pick among the same
nodes on views without each other's picks, and the binder would refuse the later of each pair.
So a batch of pods routed by their uid goes round its queue's own arc of the node order
(`QueueShare.arc`); a batch holding a pod that is the first queue's for what it asks (a spread or
an affinity over many nodes) goes round every node, as before: such pods may be all the cluster
has, and kept to one arc they would crowd a quarter of the nodes. A walk that needs more nodes
than the rest of its arc holds still runs on into the next queue's, where the two can meet.
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.model import Pod
from shared.protocol.start_ring import FORGET_AFTER, StartRing

from .share import QueueShare


class QueueStarts:
    def __init__(self, share: QueueShare) -> None:
        self.share = share
        self.every = StartRing()
        """The ring round every node: a lone queue's, and batches with pods that span nodes."""
        self.own = StartRing()
        """The ring round this queue's arc, where queues share the cluster."""
        self._rings: dict[str, StartRing] = {}
        """The ring each batch not yet decided went round."""

    def reserve(self, batch_id: str, pods: Sequence[Pod], num_nodes: int) -> int:
        """The start (a node's index) for a batch of `pods` being sent, reserving its walks."""
        if self.share.whole:
            return self.every.reserve(batch_id, len(pods), num_nodes)
        ring = self.every if self.share.spanning(pods) else self.own
        while len(self._rings) >= FORGET_AFTER:  # batches given up on a path that never said so
            del self._rings[next(iter(self._rings))]
        self._rings[batch_id] = ring
        return self.share.shifted(ring.reserve(batch_id, len(pods), self._size(ring, num_nodes)), num_nodes)

    def release(self, batch_id: str) -> None:
        """The batch is back (or was given up): its reservation ends (a ring that does not hold it
        is left as it is)."""
        self.every.release(batch_id)
        self.own.release(batch_id)

    def advance(self, walked: list[int], num_nodes: int, batch_id: str) -> None:
        """The batch's answers are merged: its walks move its ring's start (a batch forgotten
        meanwhile moves none: which ring it went round is not known any more)."""
        ring = self.every if self.share.whole else self._rings.get(batch_id)
        if ring is not None:
            ring.advance(walked, self._size(ring, num_nodes), batch_id)

    def decided(self, batch_id: str) -> None:
        """The batch's pods are decided (or it was given up)."""
        self.every.decided(batch_id)
        self.own.decided(batch_id)
        self._rings.pop(batch_id, None)

    def _size(self, ring: StartRing, num_nodes: int) -> int:
        """How many nodes `ring` goes round."""
        return num_nodes if ring is self.every else self.share.arc(num_nodes)
