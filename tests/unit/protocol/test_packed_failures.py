"""A preemption request's per-node statuses packed as runs of positions read back to the same
statuses, as arrays over the view's nodes; a status naming a node the view lacks keeps its names."""

from __future__ import annotations

import random

import msgspec
import numpy as np
import pytest

from shared.events import NodeFailure
from shared.framework.snapshot import Snapshot
from shared.framework.status import Code, Status
from shared.protocol.packed_failures import pack_failures, positions_of, unpack_failures
from shared.protocol.packing import runs
from shared.scheduler.fit_error import NodeToStatus
from tests.builders import MakeNode

STATUSES = [Status(Code.UNSCHEDULABLE, "Insufficient cpu", plugin="NodeResourcesFit"),
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't match Pod's node affinity/selector",
                   plugin="NodeAffinity"),
            Status(Code.UNSCHEDULABLE, "Insufficient cpu", "Insufficient memory", plugin="NodeResourcesFit")]


@pytest.mark.parametrize("seed", range(20))
def test_packed_statuses_read_back_as_they_were(seed: int) -> None:
    rng = random.Random(seed)
    snapshot = Snapshot([MakeNode().name(f"n{i}").label("zone", f"z{i % 3}").info()
                         for i in range(rng.randrange(1, 60))])
    statuses = {name: rng.choice(STATUSES) for name in snapshot.names if rng.random() < 0.8}
    if seed % 3 == 0:
        statuses["gone"] = STATUSES[0]  # a node the view no longer has: its group keeps names
    packed = pack_failures(statuses, snapshot)
    assert all(f.at and not f.nodes for f in packed if f.code != "Unschedulable" or seed % 3)
    back = unpack_failures(packed, snapshot)
    if seed % 3:  # read as arrays (before anything iterates the map, which makes it a dict)
        assert isinstance(back, NodeToStatus)
        helpable = sorted(snapshot.position()[n] for n, s in statuses.items() if s.code == Code.UNSCHEDULABLE)
        at = back.positions_with_code(Code.UNSCHEDULABLE, snapshot.node_info_list)
        assert at is not None and at.tolist() == helpable
    assert dict(back.items()) == statuses


@pytest.mark.parametrize("positions", [[], [0], [3, 4, 5], [0, 2, 3, 7, 8, 9, 11], [5, 6, 7, 0, 1]])
def test_runs_of_positions_read_back_in_order(positions: list[int]) -> None:
    at = np.array(positions, dtype=np.intp)
    assert positions_of(runs(at)).tolist() == positions


def test_a_later_view_with_the_same_node_order_packs_from_the_arrays() -> None:
    """The queue packs a failed attempt's statuses on the view it decides on, often a later one than
    the attempt walked (other pods placed since); with the same nodes in the same order the positions
    are the same, so they are read from the arrays, not from a 5,000-entry map built to find them."""
    nodes = [f"n{i}" for i in range(40)]
    walked = Snapshot([MakeNode().name(n).info() for n in nodes])
    statuses = {n: STATUSES[i % 3] for i, n in enumerate(nodes) if i % 5}
    kept = unpack_failures(pack_failures(statuses, walked), walked)
    assert isinstance(kept, NodeToStatus)
    later = Snapshot([MakeNode().name(n).info() for n in nodes])
    assert later.names is not walked.names
    packed = pack_failures(kept, later)
    assert kept.position_groups(later.names) is not None  # still arrays: nothing iterated the map
    assert dict(unpack_failures(packed, later).items()) == statuses
    reordered = Snapshot([MakeNode().name(n).info() for n in reversed(nodes)])
    assert kept.position_groups(reordered.names) is None
    assert dict(unpack_failures(pack_failures(kept, reordered), reordered).items()) == statuses


def test_the_memo_reads_failures_again_only_for_other_failures_or_other_nodes() -> None:
    from shared.protocol.packed_failures import RejectionsMemo, rejections_of

    # One memo per preemption service: preemptors of one spec fail alike on the same nodes.
    snapshot = Snapshot([MakeNode().name(n).info() for n in "abcd"])
    cpu = NodeFailure(code="Unschedulable", reasons=["Insufficient cpu"], plugin="NodeResourcesFit", at=[0, 3])
    memo = RejectionsMemo()
    first = memo.read([cpu], snapshot)
    assert first is not None and memo.read([NodeFailure(**msgspec.structs.asdict(cpu))], snapshot) is first
    other = memo.read([msgspec.structs.replace(cpu, at=[1, 3])], snapshot)
    assert other is not first and other is not None and other.positions.tolist() == [1, 2, 3]
    moved = Snapshot([MakeNode().name(n).info() for n in "abcde"])
    again = memo.read([msgspec.structs.replace(cpu, at=[1, 3])], moved)
    assert again is not other and again is not None
    expected = rejections_of([msgspec.structs.replace(cpu, at=[1, 3])], moved)
    assert again.pairs() == expected.pairs()  # type: ignore[union-attr]  # non-empty here
    memo_read = unpack_failures([cpu], snapshot, memo)
    assert dict(memo_read.items()) == dict(unpack_failures([cpu], snapshot).items())
