"""The nodes a batch's pods were placed on so far, and their node-local scores read again.

A batch's pods are ranked from the raw scores their walk took before any of them was placed. Pods
sharing a walk (a ReplicaSet's) then all put its few best nodes first and filled them one after
another, where one scheduler deciding them in turn spreads them: SchedulingBasic, 10,000 pods on
5,000 nodes, left some nodes with 28 pods and others with none, where the in-process core leaves
each two or three. So once a pod of the batch is placed on a node, the scores that read nothing
but the pod and that node (`NODE_LOCAL` or `SNAPSHOT_LOCAL` plugins) and that the node's pods move
(resources; not taints, labels or images: `SCORE_IGNORES_NODE_PODS`) are read again on the view
for the pods after it; the scores that count other nodes' pods (PodTopologySpread,
InterPodAffinity) stay the walk's.

What a pod's columns hold depends only on the nodes placed on before it and the view, so every
decider of a batch (the queue, replay, explain, a proposing worker) ranks alike. The pods sharing
a walk are alike but for their names, so whichever of them reads a node's scores again reads what
any other would.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from shared.framework.cycle_state import CycleState
from shared.framework.pod_info import PodInfo
from shared.framework.runtime import Framework
from shared.framework.score_columns import Column
from shared.framework.snapshot import Snapshot
from shared.framework.status import Code

from .raw_scores import RawScores


class PlacedNodes:
    """One batch decision's placements so far, in order (a node once per pod placed on it), and
    per walk the raw columns with those nodes' node-local scores read again."""

    def __init__(self, earlier: Iterable[str] = ()) -> None:
        self.nodes: list[str] = list(earlier)
        self._walks: dict[int, WalkColumns] = {}

    def placed(self, node: str) -> None:
        self.nodes.append(node)

    def walk(self, fwk: Framework, state: CycleState, pod: PodInfo, snapshot: Snapshot, names: list[str],
             raw: Mapping[str, Mapping[str, int]]) -> WalkColumns:
        """The columns of the walk `raw` answered, over `names`, with every placement so far read
        in (PreScore must have run on `state`)."""
        fresh = self._walks.get(id(raw))
        if fresh is None or (fresh.names is not names and fresh.names != names):
            fresh = self._walks[id(raw)] = WalkColumns(raw, names)
        fresh.catch_up(fwk, state, pod, snapshot, self.nodes)
        return fresh

    def columns(self, fwk: Framework, state: CycleState, pod: PodInfo, snapshot: Snapshot, names: list[str],
                raw: Mapping[str, Mapping[str, int]]) -> list[tuple[str, Column]]:
        """Each score plugin's raw column over `names` but those PreScore skipped (PreScore must
        have run on `state`)."""
        fresh = self.walk(fwk, state, pod, snapshot, names, raw)
        skipped = state.skip_score_plugins
        return [(pl.name, fresh.column(pl.name)) for pl in fwk.score_plugins if pl.name not in skipped]


class WalkColumns:
    """One walk's raw columns, the placed nodes' node-local entries read again."""

    def __init__(self, raw: Mapping[str, Mapping[str, int]], names: list[str]) -> None:
        self.raw = raw
        """Held so that its id names it for as long as this lives."""
        self.names = names
        self._scores = RawScores.of_mapping(raw)
        self._rows = self._scores.rows(names)
        self._columns: dict[str, Column] = {}
        self._owned: set[str] = set()
        """The columns copied from the walk's, so written here alone."""
        self._position: dict[str, int] | None = None
        self._seen = 0
        """How many of the batch's placements are read in."""
        self.changes: list[tuple[str, int]] = []
        """Each value of a column changed, in order: (plugin, position)."""

    def column(self, plugin: str) -> Column:
        column = self._columns.get(plugin)
        if column is None:
            column = self._columns[plugin] = self._scores.column(plugin, self._rows, len(self.names))
        return column

    def catch_up(self, fwk: Framework, state: CycleState, pod: PodInfo, snapshot: Snapshot,
                 placed: Sequence[str]) -> None:
        if self._seen == len(placed):
            return
        new, self._seen = placed[self._seen:], len(placed)
        if self._position is None:
            self._position = {name: i for i, name in enumerate(self.names)}
        at = sorted({i for i in map(self._position.get, new) if i is not None})
        if not at:
            return
        skipped = state.skip_score_plugins
        local = [pl for pl in fwk.score_plugins
                 if pl.name not in skipped and (pl.NODE_LOCAL or pl.SNAPSHOT_LOCAL) and not pl.SCORE_IGNORES_NODE_PODS]
        for i in at:
            info = snapshot.get(self.names[i])
            if info is None:
                continue
            for pl in local:
                value, status = pl.score(state, pod, info)
                # An error keeps the walk's score.
                if (status is None or status.code == Code.SUCCESS) and value != self.column(pl.name)[i]:
                    self._writable(pl.name)[i] = value
                    self.changes.append((pl.name, i))

    def _writable(self, plugin: str) -> Column:
        column = self.column(plugin)
        if plugin not in self._owned:
            column = self._columns[plugin] = np.array(column, dtype=np.int64)
            self._owned.add(plugin)
        return column
