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
from operator import itemgetter

import numpy as np

from shared.events import PodShardResult
from shared.framework.runtime import Framework
from shared.framework.snapshot import Snapshot
from shared.indexes.rejections import Rejections
from shared.scheduler.fit_error import Diagnosis

from .packed_failures import SnapshotNodes, positions_of, rejections_of
from .packing import column_of
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
        return MergedFilter(feasible=list(self.feasible), diagnosis=d, processed=self.processed, advance=True)


def mergeable(results: Sequence[PodShardResult], nominated: str) -> bool:
    """Whether `merge_packed` covers these answers (see the module's docstring)."""
    if nominated or not results:
        return False
    for r in results:
        if r.error or r.prefilter is not None or r.prefilter_nodes is not None or r.nominated is not None:
            return False
        if r.feasible or r.scores or any(not f.at for f in r.failures):
            return False  # names: made on another view, or unpacked
    return True


def merge_packed(fwk: Framework, snapshot: Snapshot, start: int,
                 results: Sequence[PodShardResult]) -> PackedMerge | None:
    """`merge_filter`'s walk over packed answers, as arrays; None where two answers cover the
    same node (a resent request answered for more shards): the walk by name reads those."""
    n = snapshot.num_nodes()
    if n == 0:
        return None
    first = start % n
    parts = [positions_of(r.feasible_at) for r in results]
    at = np.concatenate(parts) if parts else np.zeros(0, dtype=np.intp)
    ranks = (at - first) % n
    order = np.argsort(ranks, kind="stable")
    if names_a_node_twice(ranks[order]):
        return None
    to_find = feasible_target(fwk, n)
    take = order[:to_find]
    end = int(ranks[order[to_find - 1]]) + 1 if len(order) >= to_find else n
    failures = [f for r in results for f in r.failures]
    rejections = None
    cut = 0
    if failures:
        every = rejections_of(failures, snapshot, start)
        if every is None:
            return None
        walked = (every.positions - first) % n
        if names_a_node_twice(walked):
            return None
        cut = int(np.searchsorted(walked, end))
        rejections = Rejections(SnapshotNodes(snapshot), every.table, every.positions[:cut], every.ids[:cut])
    feasible = _names(snapshot.names, at[take])
    scored = _raw(results, parts, take, feasible)
    if scored is None:
        return None
    raw, error = scored
    rejectors = frozenset(p for r in results for p in r.rejectors)
    return PackedMerge(feasible, rejections, rejectors, len(feasible) + cut, raw, error)


def _raw(results: Sequence[PodShardResult], parts: Sequence[np.ndarray], take: np.ndarray,
         feasible: list[str]) -> tuple[RawScores | None, str] | None:
    """The taken nodes' raw score columns (the answers' columns one after another, as `at`), or
    the scoring error; (None, "") when a score phase must ask for them; None where answers
    scored different plugins (the mapping leaves a node out where its shard did not score)."""
    answering = [(r, len(p)) for r, p in zip(results, parts) if len(p)]
    if len(feasible) < 2 or not answering:
        return NO_SCORES, ""
    for r, _ in answering:
        if r.score_error:
            return NO_SCORES, r.score_error
    if not all(r.scored for r, _ in answering):
        return None, ""
    plugins = list(answering[0][0].score_runs)
    if any(r.score_runs.keys() != answering[0][0].score_runs.keys() for r, _ in answering):
        return None
    columns: dict[str, Column] = {}
    for plugin in plugins:
        pieces = [column_of(r.score_runs[plugin]) for r, _ in answering]
        columns[plugin] = (np.concatenate(pieces) if len(pieces) > 1 else pieces[0])[take]
    return RawScores(feasible, columns), ""


def _names(names: list[str], at: np.ndarray) -> list[str]:
    if not len(at):
        return []
    if len(at) == 1:
        return [names[int(at[0])]]
    return list(itemgetter(*at.tolist())(names))
