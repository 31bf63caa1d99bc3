"""One preemptor spec's dry-run answers over a snapshot's nodes, as arrays.

The dry run scans from a random offset until it has `numCandidates` candidates: 500 of 5,000
nodes for every preemptor. Where a node's answer depends only on the node, the pod's spec and the
nominated pods Filter counts there (see `DefaultPreemption.victims_table`), the answers are kept
per node position and the scan becomes array arithmetic: only the nodes whose answer is not known
(changed since, by the NodeInfo journal or the nominator's stamp) are dry-run, in scan order, and
the scan stops exactly where the sequential one would.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from itertools import repeat
from operator import attrgetter, itemgetter

import numpy as np
import numpy.typing as npt

from shared.framework.node_info import NodeInfo, changed_since, journal_end
from shared.framework.snapshot import Snapshot
from shared.framework.status import Code, Status
from shared.indexes.nominated_positions import NominatedPositions, NominationLog

from .victims import RANK_FIELDS, Candidate

Answer = tuple[Candidate, Status | None]
_CODE = attrgetter("code")
Indexes = npt.NDArray[np.intp]


def is_candidate(answer: Answer) -> bool:
    """Victim selection succeeded and evicts somebody."""
    candidate, status = answer
    return (status is None or status.code == Code.SUCCESS) and bool(candidate.victims.pods)


class ScannedCandidates(list[Candidate]):
    """Candidates in scan order, with `first_best`: the index of the first whose `Victims.rank`
    is greatest, found from the table's rank columns (what the default pick would choose,
    without touching hundreds of candidates to ask); None where a rank is not exact as a float."""

    first_best: int | None = None


class DryRun:
    """What a scan found: the candidates in scan order, and the other scanned nodes' answers."""

    __slots__ = ("candidates", "others")

    def __init__(self, candidates: ScannedCandidates, others: list[tuple[NodeInfo, Answer]]) -> None:
        self.candidates, self.others = candidates, others


class VictimsTable:
    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.nodes = snapshot.node_info_list
        n = len(self.nodes)
        self._position = snapshot.position()
        self._cursor = journal_end()
        self._nominated = NominatedPositions(self._position, n)
        self._valid = np.zeros(n, dtype=bool)
        self._stamp = np.zeros(n, dtype=np.int64)  # the nomination stamp an answer was kept against
        self._candidate = np.zeros(n, dtype=bool)
        # The last answer per position and its candidate; read only where `_valid` (or just
        # written for the pod's own nominated node, never valid).
        self._answers: list[Answer | None] = [None] * n
        self._candidates: list[Candidate | None] = [None] * n
        self._ranks = np.zeros((n, RANK_FIELDS))  # each candidate's Victims.rank()
        self._inexact = np.zeros(n, dtype=bool)  # a rank field a float cannot hold exactly

    def catch_up(self, log: NominationLog) -> None:
        """Forget the answers of nodes changed since the last call; follow the nominations."""
        changed = changed_since(self._cursor)
        self._cursor = journal_end()
        if changed is None:
            self._valid[:] = False
        else:
            position, nodes = self._position, self.nodes
            for info in changed:
                i = position.get(info.name)
                if i is not None and nodes[i] is info:
                    self._valid[i] = False
        self._nominated.follow(log)

    def positions_with_code(self, statuses: Mapping[str, Status], code: Code) -> Indexes:
        """The positions (ascending) of the nodes whose status in `statuses` has `code`."""
        # Mapped in C: a request's statuses name every node of the cluster.
        count = len(statuses)
        at = np.fromiter(map(self._position.get, statuses, repeat(-1)), dtype=np.intp, count=count)
        codes = np.fromiter(map(_CODE, statuses.values()), dtype=np.int64, count=count)
        return np.sort(at[(codes == int(code)) & (at >= 0)])

    def scan(self, positions: Indexes, offset: int, wanted: int, own_node: str | None,
             dry_run: Callable[[NodeInfo], Answer]) -> DryRun:
        """Scan `positions` (ascending) from `offset` (modulo their number), wrapping around, until
        `wanted` candidates are found, dry-running (`dry_run`) each node whose answer is not kept.
        The pod's own nominated node is always dry-run and never kept: the pod itself counts
        differently there."""
        own = self._position.get(own_node, -1) if own_node else -1
        end = len(positions)
        offset = offset % end if end else 0
        # The table is read for the scan order's first nodes only, a window that grows when the scan
        # needs more: the scan nearly always stops within twice the candidates wanted, and reading
        # every node's entries (5,000 of them) would cost more than the scan.
        window = _Window(self, positions, offset, own)
        window.grow(min(end, 2 * wanted + 64))
        found, lo = 0, 0
        while lo < end and found < wanted:
            # The scan cannot stop before the node that would be the last wanted candidate if
            # every unknown node turned out one.
            while True:
                order, known, candidate = window.order, window.known, window.candidate
                may = np.flatnonzero(~known[lo:] | candidate[lo:])
                if len(may) >= wanted - found or len(known) == end:
                    break
                window.grow(min(end, 2 * len(known)))
            hi = lo + int(may[wanted - found - 1]) + 1 if len(may) >= wanted - found else end
            for k in (np.flatnonzero(~known[lo:hi]) + lo).tolist():
                i = int(order[k])
                answer = dry_run(self.nodes[i])
                candidate[k] = is_candidate(answer)
                self._answers[i], self._candidates[i] = answer, answer[0]
                self._valid[i] = i != own
                self._stamp[i], self._candidate[i] = self._nominated.stamp[i], candidate[k]
                if candidate[k]:
                    rank = answer[0].victims.rank()
                    self._ranks[i] = rank
                    self._inexact[i] = not all(_exact(v) for v in rank)
            found += int(np.count_nonzero(candidate[lo:hi]))
            lo = hi
        answers, nodes = self._answers, self.nodes
        scanned = window.order[:lo]
        picked = window.candidate[:lo]
        at = scanned[picked]
        candidates = ScannedCandidates(_at(self._candidates, at.tolist()))
        if not self._inexact[at].any():
            candidates.first_best = first_greatest(self._ranks[at])
        others = [(nodes[i], answers[i]) for i in scanned[~picked].tolist()]
        return DryRun(candidates, others)


class _Window:
    """The first nodes of a scan's order (`positions` from `offset`, wrapping around) with what
    the table knows of them: `known` (an answer kept against the node as it is and its stamp; never
    the pod's own nominated node) and `candidate`. The scan marks the nodes it dry-runs in them."""

    __slots__ = ("_table", "_positions", "_offset", "_own", "order", "known", "candidate")

    def __init__(self, table: VictimsTable, positions: Indexes, offset: int, own: int) -> None:
        self._table, self._positions, self._offset, self._own = table, positions, offset, own
        self.order = np.zeros(0, dtype=np.intp)
        self.known = np.zeros(0, dtype=bool)
        self.candidate = np.zeros(0, dtype=bool)

    def grow(self, size: int) -> None:
        """Extend the window to the first `size` nodes of the order."""
        t, have, n = self._table, len(self.order), len(self._positions)
        if size <= have:
            return
        more = self._positions[(np.arange(have, size) + self._offset) % n]
        known = t._valid[more] & (t._stamp[more] == t._nominated.stamp[more])
        if self._own >= 0:
            known[more == self._own] = False
        self.order = np.concatenate((self.order, more)) if have else more
        self.known = np.concatenate((self.known, known)) if have else known
        candidate = t._candidate[more] & known
        self.candidate = np.concatenate((self.candidate, candidate)) if have else candidate


def _exact(value: float) -> bool:
    """Held exactly by a float64 (priorities are int32 in Kubernetes, but inputs may say more)."""
    return isinstance(value, float) or abs(value) <= _FLOAT_EXACT


_FLOAT_EXACT = 2**53


def first_greatest(ranks: npt.NDArray[np.float64]) -> int:
    """The first row of the lexicographically greatest (as `max` over the rank tuples, then
    `index`)."""
    rows = np.arange(len(ranks))
    for column in ranks.T:
        if len(rows) < 2:
            break
        values = column[rows]
        rows = rows[values == values.max()]
    return int(rows[0]) if len(rows) else 0


def _at(items: list[Candidate | None], positions: list[int]) -> list[Candidate]:
    """`items` at `positions`, gathered in C (hundreds of candidates a scan)."""
    if len(positions) < 2:
        return [items[i] for i in positions]  # type: ignore[misc]  # callers ask only where candidates are
    return list(itemgetter(*positions)(items))


__all__ = ["Answer", "DryRun", "ScannedCandidates", "VictimsTable", "is_candidate"]
