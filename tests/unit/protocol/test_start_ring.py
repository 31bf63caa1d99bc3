from shared.protocol.start_ring import FORGET_AFTER, StartRing


def test_one_batch_at_a_time_starts_where_the_window_before_it_ended() -> None:
    ring = StartRing()
    assert ring.reserve("a", 3, 100) == 0
    ring.release("a")
    ring.advance([40, 40, 30], 100)  # its pods walked from 0: nodes 0-39 between them
    ring.decided("a")
    assert ring.reserve("b", 3, 100) == 40
    ring.release("b")
    ring.advance([70, 50], 100)
    ring.decided("b")
    assert ring.reserve("c", 1, 100) == 10  # 40 + 70, modulo 100 nodes
    ring.release("c")
    ring.advance([], 100)
    ring.decided("c")
    assert ring.reserve("d", 1, 100) == 10


def test_windows_of_batches_one_after_another_tile_the_nodes() -> None:
    """1,024 pods sharing walks of 500 of 5,000 nodes: the batches' windows go round every node
    (moved by the sum of the walks, the start came back to every other block of 500)."""
    ring = StartRing()
    starts = []
    for k in range(10):
        starts.append(ring.reserve(f"b{k}", 1024, 5000))
        ring.release(f"b{k}")
        ring.advance([500] * 1024, 5000, f"b{k}")
        ring.decided(f"b{k}")
    assert sorted(starts) == list(range(0, 5000, 500))


def test_a_batch_sent_while_another_is_out_starts_where_that_one_is_expected_to_end() -> None:
    ring = StartRing()
    ring.reserve("first", 2, 1000)
    ring.release("first")
    ring.advance([50, 50], 1000)  # 50 nodes a walk so far
    assert ring.reserve("a", 4, 1000) == 50
    assert ring.reserve("b", 4, 1000) == 100  # past a's expected window of 50
    assert ring.reserve("c", 2, 1000) == 150
    ring.release("a")
    ring.advance([60, 60, 60, 60], 1000)  # a's window was 60 nodes: the start moves by that
    assert ring.next == 110
    ring.release("b")
    ring.release("c")
    for batch in ("first", "a", "b", "c"):
        ring.decided(batch)
    assert ring.reserve("d", 1, 1000) == 110  # nothing out or undecided: exactly where a's ended


def test_the_estimate_follows_recent_batches_and_a_walkless_batch_leaves_it() -> None:
    ring = StartRing()
    ring.advance([100], 10_000)
    assert ring.walked_per_pod == 100
    ring.advance([200, 200], 10_000)
    assert ring.walked_per_pod == 125  # 0.75 × 100 + 0.25 × 200
    ring.advance([], 10_000)
    assert ring.walked_per_pod == 125


def test_with_nothing_out_the_start_is_where_the_windows_ended() -> None:
    """Reduced by the node count of each walk's snapshot, not by today's (nodes may have gone
    since)."""
    ring = StartRing(next=27, walked_per_pod=10)
    assert ring.reserve("a", 5, 20) == 27
    assert ring.reserve("b", 1, 20) == 17  # (27 + a's window of 10) % 20
    ring.release("a")
    ring.release("a")  # twice is harmless
    ring.release("b")
    assert ring.reserve("c", 1, 0) == 27


def test_a_start_in_the_window_of_a_batch_not_yet_decided_moves_past_it() -> None:
    ring = StartRing(walked_per_pod=100)
    assert ring.reserve("a", 10, 1000) == 0  # a's pods walk nodes 0-99
    assert ring.reserve("b", 10, 1000) == 100  # sent while a is out: past a's window
    ring.release("a")
    ring.advance([40] * 10, 1000, "a")  # a's walks were short: the start is at 40
    ring.release("b")  # b is not answered: its window is still nodes 100-199
    assert ring.reserve("c", 10, 1000) == 200  # 40-139 would cross b's window: past it
    for batch in ("a", "b", "c"):
        ring.decided(batch)
    ring.release("c")
    assert ring.reserve("d", 10, 1000) == 40  # everything decided: exactly where the windows ended


def _undecided(ring: StartRing, *starts: int, name: str = "w") -> None:
    """Batches sent one at a time from `starts` and answered, none decided yet."""
    for k, start in enumerate(starts):
        ring.next = start
        assert ring.reserve(f"{name}{k}", 1, 1000) == start
        ring.release(f"{name}{k}")


def test_the_start_moves_past_every_window_it_would_share_and_wraps_the_ring() -> None:
    ring = StartRing(walked_per_pod=100)
    _undecided(ring, 20, 120)
    ring.next = 950
    assert ring.reserve("z", 1, 1000) == 220  # 950-49 overlaps 20-119, then 120-219


def test_windows_that_leave_no_room_keep_the_estimate() -> None:
    ring = StartRing(walked_per_pod=100)
    _undecided(ring, *range(0, 1000, 100))
    ring.next = 5
    assert ring.reserve("z", 1, 1000) == 5


def test_a_batch_given_up_undecided_is_forgotten_in_time() -> None:
    ring = StartRing(walked_per_pod=1)
    _undecided(ring, 0)
    ring.next = 0
    assert ring.reserve("probe", 1, 1000) == 1  # past the window of the batch at 0
    ring.release("probe")
    ring.decided("probe")
    for k in range(FORGET_AFTER - 2):  # later batches, each decided
        ring.next = 10 + 2 * k
        ring.reserve(f"later{k}", 1, 1000)
        ring.release(f"later{k}")
        ring.decided(f"later{k}")
    ring.next = 0
    assert ring.reserve("again", 1, 1000) == 0  # the batch at 0, never decided, is forgotten


def test_an_answered_batch_s_window_is_its_longest_walk() -> None:
    ring = StartRing(walked_per_pod=100)
    assert ring.reserve("a", 2, 1000) == 0
    ring.release("a")
    ring.advance([300, 250], 1000, "a")  # full nodes made a's walks longer than the estimate
    ring.next = 150
    assert ring.reserve("b", 1, 1000) == 300  # past 0-299, not past the estimated 0-99
