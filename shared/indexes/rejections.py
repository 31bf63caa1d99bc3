"""The nodes one indexed walk rejected, kept as arrays until someone asks for them one by one.

A walk over 5,000 nodes where none fits (every preemptor's first attempt) would otherwise build
5,000 (name, Status) pairs, a 5,000-entry dict, a histogram over it and, for preemption, a list
of the nodes it may help. Here the rejections are positions into the index's nodes and ids into
its table of distinct statuses, so the histogram, the plugins that rejected and the nodes with
a given code are array operations over a handful of distinct statuses.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from shared.framework.node_info import NodeInfo
from shared.framework.status import Code, Status

Indexes = npt.NDArray[np.intp]
StatusIds = npt.NDArray[np.int32]


class StatusTable:
    """Distinct statuses by (code, reasons, plugin), each with a small integer id."""

    __slots__ = ("statuses", "codes", "_ids")

    def __init__(self) -> None:
        self.statuses: list[Status] = []
        self.codes: list[int] = []
        self._ids: dict[tuple[int, tuple[str, ...], str], int] = {}

    def intern(self, status: Status) -> int:
        key = (status.code, status.reasons, status.plugin)
        i = self._ids.get(key)
        if i is None:
            i = self._ids[key] = len(self.statuses)
            self.statuses.append(status)
            self.codes.append(int(status.code))
        return i


class NodeList(Protocol):
    """The nodes positions refer to (a NodeIndex): in order, their names, and name -> position.
    Read-only members, so that a holder's `list[NodeInfo]` passes for the Sequence."""

    @property
    def nodes(self) -> Sequence[NodeInfo]: ...
    @property
    def names(self) -> list[str]: ...
    @property
    def position(self) -> dict[str, int]: ...


class Rejections:
    """Rejected nodes in walk order: `positions` into `nodes` (and `names`), `ids` into `table`."""

    __slots__ = ("nodes", "names", "position", "table", "positions", "ids", "_id_at", "_counts", "_with_code")

    def __init__(self, walked: NodeList, table: StatusTable, positions: Indexes, ids: StatusIds) -> None:
        self.nodes, self.names, self.position = walked.nodes, walked.names, walked.position
        self.table = table
        self.positions = positions
        self.ids = ids
        self._id_at: StatusIds | None = None
        self._counts: list[tuple[Status, int]] | None = None
        self._with_code: dict[int, Indexes] = {}

    def __len__(self) -> int:
        return len(self.positions)

    def __iter__(self) -> Iterator[tuple[str, Status]]:
        return iter(self.pairs())

    def pairs(self) -> list[tuple[str, Status]]:
        names, statuses = self.names, self.table.statuses
        return [(names[p], statuses[i]) for p, i in zip(self.positions.tolist(), self.ids.tolist())]

    def get(self, name: str) -> Status | None:
        p = self.position.get(name)
        if p is None:
            return None
        if self._id_at is None:
            self._id_at = np.full(len(self.names), -1, dtype=np.int32)
            self._id_at[self.positions] = self.ids
        i = int(self._id_at[p])
        return self.table.statuses[i] if i >= 0 else None

    def counts(self) -> list[tuple[Status, int]]:
        """Each distinct status with how many nodes have it (in the table's order)."""
        if self._counts is None:
            counts = np.bincount(self.ids, minlength=0) if len(self.ids) else np.zeros(0, dtype=np.intp)
            statuses = self.table.statuses
            self._counts = [(statuses[i], int(counts[i])) for i in np.flatnonzero(counts).tolist()]
        return self._counts

    def groups(self) -> list[tuple[Status, list[str]]]:
        """Each distinct status with its nodes in walk order, by first appearance."""
        names = self.names
        return [(status, [names[p] for p in at.tolist()]) for status, at in self.position_groups()]

    def position_groups(self) -> list[tuple[Status, Indexes]]:
        """`groups` with the nodes as positions."""
        positions, ids = self.positions, self.ids
        distinct, first = np.unique(ids, return_index=True)
        statuses = self.table.statuses
        return [(statuses[int(distinct[k])], positions[ids == distinct[k]]) for k in np.argsort(first, kind="stable")]

    def positions_with_code(self, code: Code) -> Indexes:
        """The positions (ascending, not walk order) of the nodes rejected with `code`; read-only,
        kept (a memo hands one request's rejections to the next)."""
        at = self._with_code.get(int(code))
        if at is None:
            codes = np.asarray(self.table.codes, dtype=np.int32)
            at = self._with_code[int(code)] = np.sort(self.positions[codes[self.ids] == int(code)])
            at.flags.writeable = False
        return at
