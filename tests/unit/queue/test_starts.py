"""Where a queue's batches start: alone, round every node as upstream's round-robin start; sharing
the cluster, a batch routed by uid goes round its queue's own arc, and one holding a pod that spans
nodes goes round every node."""

from __future__ import annotations

from services.queue.share import QueueShare
from services.queue.starts import QueueStarts
from shared.model import Pod
from shared.protocol.start_ring import StartRing
from tests.builders import MakePod

NODES = 1000
PLAIN = [MakePod().name(f"p{i}").uid(f"default/p{i}").obj() for i in range(4)]
SPREAD = MakePod().name("s").uid("default/s").spread(1, "topology.kubernetes.io/zone").obj()


def _walk(starts: QueueStarts, batch: str, pods: list[Pod], walked: list[int]) -> int:
    start = starts.reserve(batch, pods, NODES)
    starts.release(batch)
    starts.advance(walked, NODES, batch)
    starts.decided(batch)
    return start


def test_alone_the_starts_are_upstreams_round_robin() -> None:
    alone, ring = QueueStarts(QueueShare()), StartRing()
    for i in range(40):
        want = ring.reserve(f"b{i}", 4, NODES)
        ring.release(f"b{i}")
        ring.advance([97, 113, 251, 89], NODES, f"b{i}")
        ring.decided(f"b{i}")
        assert _walk(alone, f"b{i}", PLAIN, [97, 113, 251, 89]) == want


def test_sharing_a_batch_routed_by_uid_stays_on_its_queues_arc() -> None:
    for index in range(4):
        starts = QueueStarts(QueueShare(index, 4))
        arc = range(index * NODES // 4, (index + 1) * NODES // 4)
        assert all(_walk(starts, f"b{i}", PLAIN, [97, 113, 251, 89]) in arc for i in range(200))


def test_sharing_a_batch_with_a_pod_that_spans_nodes_goes_round_every_node() -> None:
    starts = QueueStarts(QueueShare(0, 4))
    seen = {_walk(starts, f"b{i}", [*PLAIN, SPREAD], [97, 113, 251, 89]) for i in range(200)}
    assert max(seen) >= NODES // 4
    # The arc's own ring is where it was: uid-routed batches start on the arc still.
    assert _walk(starts, "plain", PLAIN, [97]) in range(NODES // 4)


def test_a_batch_forgotten_while_out_ends_its_reservation_and_moves_no_start() -> None:
    starts = QueueStarts(QueueShare(1, 4))
    starts.reserve("old", PLAIN, NODES)
    for i in range(64):  # the queue never said what became of these
        starts.reserve(f"b{i}", PLAIN, NODES)
    every_next, own_next = starts.every.next, starts.own.next
    starts.release("old")
    starts.advance([97], NODES, "old")
    starts.decided("old")
    assert "old" not in starts.own._out and "old" not in starts.own._undecided
    assert (starts.every.next, starts.own.next) == (every_next, own_next)
