"""A failed attempt's per-node statuses as a preemption request carries them: each distinct status
with its nodes as runs of positions in the view's node order at the request's watermark.

A preemptor's first attempt fails on every node, so named, a request on 5,000 nodes is 60 KB of
node names that the broker carries, the projector stores and the preemption service decodes and
maps back to positions. As runs of positions it is a few integers per status, and the service
reads them as arrays over its own view (folded to that watermark, so in the same node order)
without building a 5,000-entry map. A status whose nodes the view lacks keeps its names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec
import numpy as np

from shared.events import NodeFailure
from shared.framework.snapshot import Snapshot
from shared.framework.status import Status
from shared.indexes.rejections import Indexes, Rejections, StatusTable
from shared.scheduler.fit_error import NodeToStatus

from .failure_groups import group_failures, to_failure, to_status, ungroup_failures
from .packing import runs


class SnapshotNodes:
    """A snapshot's nodes as positions refer to them (`rejections.NodeList`)."""

    __slots__ = ("nodes", "names", "position")

    def __init__(self, snapshot: Snapshot) -> None:
        self.nodes = snapshot.node_info_list
        self.names = snapshot.names
        self.position = snapshot.position()


def pack_failures(statuses: Mapping[str, Status], snapshot: Snapshot) -> list[NodeFailure]:
    """`statuses` grouped by equal status, each group's nodes as runs of ascending positions in
    `snapshot` (the view at the watermark the request names); a group naming a node the snapshot
    lacks keeps its names."""
    groups = statuses.position_groups(snapshot.names) if isinstance(statuses, NodeToStatus) else None
    if groups is not None:  # kept as positions into this very snapshot
        return [msgspec.structs.replace(to_failure(status), at=runs(np.sort(at))) for status, at in groups]
    position = snapshot.position()
    out: list[NodeFailure] = []
    for failure in group_failures(statuses.items()):
        at = np.fromiter(map(position.get, failure.nodes, [-1] * len(failure.nodes)), dtype=np.intp,
                         count=len(failure.nodes))
        if len(at) and int(at.min()) >= 0:
            failure = msgspec.structs.replace(failure, nodes=[], at=runs(np.sort(at)))
        out.append(failure)
    return out


def positions_of(packed: Sequence[int]) -> Indexes:
    """`runs(...)`'s positions back, in order."""
    if not packed:
        return np.zeros(0, dtype=np.intp)
    firsts = np.asarray(packed[0::2], dtype=np.intp)
    counts = np.asarray(packed[1::2], dtype=np.intp)
    starts = np.cumsum(counts) - counts
    return np.repeat(firsts - starts, counts) + np.arange(int(counts.sum()), dtype=np.intp)


def rejections_of(failures: Sequence[NodeFailure], snapshot: Snapshot, start: int = 0) -> Rejections | None:
    """Packed `failures` as arrays over `snapshot` (the view at the watermark they were packed at),
    in walk order from `start`; None when one of them names its nodes."""
    if not all(f.at for f in failures):
        return None
    return rejections_at([(to_status(f), positions_of(f.at)) for f in failures], snapshot, start)


def rejections_at(groups: Sequence[tuple[Status, Indexes]], snapshot: Snapshot, start: int = 0) -> Rejections:
    """Statuses with their nodes' positions in `snapshot` (the view at the watermark they were
    made at) as its rejections, in walk order from `start`."""
    table = StatusTable()
    n = snapshot.num_nodes()
    positions: list[Indexes] = []
    ids: list[np.ndarray] = []
    for status, at in groups:
        at = at[(at >= 0) & (at < n)]  # positions past the view's end are left out, as names it lacks are
        positions.append(at)
        ids.append(np.full(len(at), table.intern(status), dtype=np.int32))
    at, status_ids = (np.concatenate(positions), np.concatenate(ids)) if positions else (
        np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.int32))
    order = np.argsort((at - start) % max(n, 1), kind="stable")
    return Rejections(SnapshotNodes(snapshot), table, at[order], status_ids[order])


def unpack_failures(failures: Sequence[NodeFailure], snapshot: Snapshot,
                    memo: RejectionsMemo | None = None) -> Mapping[str, Status]:
    """Node name → status from a request's failures; packed ones are read as positions into
    `snapshot`, which must be the view at the request's watermark (positions past its end are
    left out, as names it lacks are). `memo`: where the last packed failures read are kept."""
    packed = [f for f in failures if f.at]
    if not packed:
        return ungroup_failures(failures)
    out = NodeToStatus()
    rejections = memo.read(packed, snapshot) if memo is not None else rejections_of(packed, snapshot)
    assert rejections is not None  # None only when a failure names its nodes, and these are all packed
    out.add_rejections(rejections)
    named = [f for f in failures if not f.at]
    if named:
        out.update(ungroup_failures(named))
    return out


class RejectionsMemo:
    """The packed failures read last, with the snapshot they were read over: preemptors of one
    spec fail alike (every node, "Insufficient cpu"), so the next request reads the same arrays
    again while the view's nodes stay the same. `Rejections` is never changed once made."""

    __slots__ = ("_snapshot", "_packed", "_rejections")

    def __init__(self) -> None:
        self._snapshot: Snapshot | None = None
        self._packed: list[NodeFailure] = []
        self._rejections: Rejections | None = None

    def read(self, packed: Sequence[NodeFailure], snapshot: Snapshot) -> Rejections | None:
        """`rejections_of(packed, snapshot)`."""
        if self._snapshot is not snapshot or self._packed != packed:
            self._snapshot, self._packed, self._rejections = snapshot, list(packed), rejections_of(packed, snapshot)
        return self._rejections
