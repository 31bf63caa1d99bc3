from shared.protocol.start_ring import StartRing


def test_one_batch_at_a_time_starts_where_the_walks_before_it_ended() -> None:
    ring = StartRing()
    assert ring.reserve("a", 3, 100) == 0
    ring.release("a")
    ring.advance([40, 40, 30], 100)
    assert ring.reserve("b", 3, 100) == 10  # 110 walked, modulo 100 nodes
    ring.release("b")
    ring.advance([], 100)
    assert ring.reserve("c", 1, 100) == 10


def test_a_batch_sent_while_another_is_out_starts_where_that_one_is_expected_to_end() -> None:
    ring = StartRing()
    ring.reserve("first", 2, 1000)
    ring.release("first")
    ring.advance([50, 50], 1000)  # 50 nodes a pod so far
    assert ring.reserve("a", 4, 1000) == 100
    assert ring.reserve("b", 4, 1000) == 300  # after a's expected 4 × 50
    assert ring.reserve("c", 2, 1000) == 500
    ring.release("a")
    ring.advance([60, 60, 60, 60], 1000)  # a walked 240: the start moves by what was walked
    assert ring.next == 340
    ring.release("b")
    ring.release("c")
    assert ring.reserve("d", 1, 1000) == 340  # nothing out: exactly the walks' sum


def test_the_estimate_follows_recent_batches_and_a_walkless_batch_leaves_it() -> None:
    ring = StartRing()
    ring.advance([100], 10_000)
    assert ring.walked_per_pod == 100
    ring.advance([200, 200], 10_000)
    assert ring.walked_per_pod == 125  # 0.75 × 100 + 0.25 × 200
    ring.advance([], 10_000)
    assert ring.walked_per_pod == 125


def test_with_nothing_out_the_start_is_the_sum_as_it_stands() -> None:
    """As the queue kept it before batches were reserved: reduced by the node count of each walk's
    snapshot, not by today's (nodes may have gone since)."""
    ring = StartRing(next=27, walked_per_pod=10)
    assert ring.reserve("a", 5, 20) == 27
    assert ring.reserve("b", 1, 20) == 17  # (27 + 50) % 20
    ring.release("a")
    ring.release("a")  # twice is harmless
    ring.release("b")
    assert ring.reserve("c", 1, 0) == 27
