"""The merge of packed shard answers as arrays: the queue's work per pod is O(nodes the walk
wanted), whatever the number of answers.

A pod's packed answers (one per filter worker, each made on the queue's view at the request's
watermark) hold the feasible nodes as positions in walk order, the raw score columns aligned with
them and the rejected nodes as positions grouped by status. The global walk of `merge_filter` is
then a sort by walk rank: the first `numFeasibleNodesToFind` feasible positions, and every
rejected position before the last of them. Each worker walked its shards until it alone had
found that many feasible nodes, so every node before that point was evaluated by some worker.

With one answer per worker, the same merge walked node by node built dictionaries of every answered
node: the queue's CPU per pod grew with the number of workers (two workers: 0.59 ms a pod against
0.36 with one, SchedulingBasic on 5,000 nodes). Answers this merge does not cover (an error, a
PreFilter rejection or node subset, a nominated pod, answers naming nodes, shards answered twice)
go through `merge_filter`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from shared.framework.runtime import Framework
from shared.framework.snapshot import Snapshot
from shared.indexes.rejections import Rejections
from shared.scheduler.fit_error import Diagnosis

from .answers import NO_POSITIONS, Walk, names_of, packed_rejections
from .packed_failures import SnapshotNodes
from .raw_scores import NO_SCORES, Column, RawScores
from .sharded import MergedFilter, feasible_target, names_a_node_twice


@dataclass(frozen=True)
class PackedMerge:
    """One merge, shared by the pods whose answers are the same objects (each pod gets its own
    `MergedFilter` from it: a FitError's diagnosis is completed per pod)."""

    feasible: list[str]
    rejections: Rejections | None
    rejectors: frozenset[str]
    processed: int
    raw: RawScores | None
    """The feasible nodes' raw scores; None when a second (score) phase must ask for them."""
    score_error: str

    def merged(self) -> MergedFilter:
        d = Diagnosis()
        d.unschedulable_plugins = set(self.rejectors)
        if self.rejections is not None and len(self.rejections):
            d.add_rejections(self.rejections)
        # One feasible list for every pod of the merge (nobody changes a merge's list in place): on
        # a large cluster a copy per pod cost more than the rest of the pod's decision.
        return MergedFilter(feasible=self.feasible, diagnosis=d, processed=self.processed, advance=True)


def mergeable(walks: Sequence[Walk], nominated: str) -> bool:
    """Whether `merge_packed` covers these walks (see the module's docstring)."""
    if nominated or not walks:
        return False
    for w in walks:
        if w.error or w.prefilter is not None or w.prefilter_nodes is not None or w.nominated is not None:
            return False
        if w.feasible_at is None or any(f.at is None for f in w.failures):
            return False  # names: made on another view
    return True


def merge_packed(fwk: Framework, snapshot: Snapshot, start: int, walks: Sequence[Walk]) -> PackedMerge | None:
    """`merge_filter`'s walk over packed walks, as arrays; None where two walks cover the same node
    (a resent request answered for more shards): the walk by name reads those."""
    n = snapshot.num_nodes()
    if n == 0:
        return None
    first = start % n
    parts = [w.feasible_at if w.feasible_at is not None else NO_POSITIONS for w in walks]
    at = np.concatenate(parts) if len(parts) > 1 else parts[0]
    if len(at) and int(at.max()) >= n:
        return None  # a position this view lacks: the walk by name leaves it out, its scores with it
    ranks = (at - first) % n
    order = np.argsort(ranks, kind="stable")
    if names_a_node_twice(ranks[order]):
        return None
    to_find = feasible_target(fwk, n)
    take = order[:to_find]
    end = int(ranks[order[to_find - 1]]) + 1 if len(order) >= to_find else n
    failures = [f for w in walks for f in w.failures]
    rejections = None
    cut = 0
    if failures:
        every = packed_rejections(failures, snapshot, start)
        if every is None:
            return None
        walked = (every.positions - first) % n
        if names_a_node_twice(walked):
            return None
        cut = int(np.searchsorted(walked, end))
        rejections = Rejections(SnapshotNodes(snapshot), every.table, every.positions[:cut], every.ids[:cut])
    feasible = names_of(snapshot.names, at[take])
    scored = _raw(walks, parts, take, feasible)
    if scored is None:
        return None
    raw, error = scored
    rejectors = frozenset(p for w in walks for p in w.rejectors)
    return PackedMerge(feasible, rejections, rejectors, len(feasible) + cut, raw, error)


def _raw(walks: Sequence[Walk], parts: Sequence[np.ndarray], take: np.ndarray,
         feasible: list[str]) -> tuple[RawScores | None, str] | None:
    """The taken nodes' raw score columns (the walks' columns one after another, as `at`), or the
    scoring error; (None, "") when a score phase must ask for them; None where walks scored
    different plugins (the mapping leaves a node out where its shard did not score)."""
    answering = [w for w, p in zip(walks, parts) if len(p)]
    if len(feasible) < 2 or not answering:
        return NO_SCORES, ""
    for w in answering:
        if w.score_error:
            return NO_SCORES, w.score_error
    if not all(w.scored for w in answering):
        return None, ""
    plugins = list(answering[0].columns)
    if any(w.columns.keys() != answering[0].columns.keys() for w in answering):
        return None
    columns: dict[str, Column] = {}
    for plugin in plugins:
        pieces = [w.columns[plugin] for w in answering]
        columns[plugin] = (np.concatenate(pieces) if len(pieces) > 1 else pieces[0])[take]
    return RawScores(feasible, columns), ""
