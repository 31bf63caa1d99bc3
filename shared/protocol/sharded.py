"""One scheduling attempt split across node shards, giving the same answer as `ScheduleAlgorithm`.

Shard side (a filter worker, holding the whole cluster view but evaluating only its shard's nodes):
- `filter_on_shard`: PreFilter (exact: the view is whole), the nominated node if it is here, then
  Filter over this shard's nodes in the global round-robin order from the queue's start index,
  stopping once this shard alone has found as many feasible nodes as the whole attempt needs. The
  first `to_find` feasible nodes of the global walk can hold at most `to_find` of one shard's, so
  the merge below sees every node the in-process walk would have evaluated.
- `raw_scores_on_shard`: PreScore over every merged feasible node, raw Score for this shard's.

Queue side:
- `merge_filter`: the global walk over the shards' verdicts (nominated node first, PreFilter's
  node subset, `numFeasibleNodesToFind`), the Diagnosis for a FitError, and how many nodes the walk
  processed (the next round-robin start).
- `finish_scores`: PreScore on the queue's own view (NormalizeScore reads its state), then
  NormalizeScore, weights and totals over the shards' raw scores; `select_host` picks as in-process.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain

import msgspec
import numpy as np
import numpy.typing as npt

from shared.events import PodShardResult
from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import NodePluginScores
from shared.framework.lazy_nodes import LazyNodes
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.runtime import Framework
from shared.framework.score_columns import Column
from shared.framework.snapshot import Snapshot
from shared.framework.status import Code, Status
from shared.indexes.node_index import Indexes, NodeIndex, NodeIndexes, WalkError, filters_after_index
from shared.indexes.rejections import Rejections
from shared.scheduler.fit_error import Diagnosis
from shared.scheduler.schedule_one import num_feasible_nodes_to_find

from .answers import Walk, failed_by_name, packed_rejections
from .failure_groups import group_failures, to_failure
from .packing import pack, pack_walk
from .placed_nodes import PlacedNodes
from .raw_scores import NO_SCORES, RawScores


def feasible_target(fwk: Framework, num_nodes: int) -> int:
    """How many feasible nodes the walk looks for (one when nothing scores them)."""
    if not fwk.has_score_plugins():
        return 1
    return num_feasible_nodes_to_find(fwk.percentage_of_nodes_to_score, num_nodes)


# --- shard side ---------------------------------------------------------------------------------


def filter_on_shard(fwk: Framework, state: CycleState, pod: PodInfo, snapshot: Snapshot, start: int,
                    shard_nodes: Collection[str], indexes: NodeIndexes | None = None,
                    *, packed: bool = False, stop_at_nominated: bool = False, whole: bool = False) -> PodShardResult:
    """PreFilter, the nominated node, and Filter over this shard's nodes; when the pod's PreScore
    does not read the feasible set, this shard's feasible nodes are scored in the same pass.
    With `indexes`, a walk over every node reads the pod spec's NodeIndex (the same answer).
    `packed`: the answer's nodes as positions in `snapshot` (shared.protocol.packing).
    `stop_at_nominated`: a nominated node that passes is the whole answer, as the merge reads no
    more (only on the queue's view: where the queue lacks the node, it reads the walk).
    `whole`: `shard_nodes` are every node, so the walk's feasible nodes are the merged ones and
    are scored here even where PreScore reads the feasible set (no score phase)."""
    uid = pod.uid
    pre_result, status, rejectors = fwk.run_pre_filter_plugins(state, pod)
    if status is not None and not status.is_success():
        if not status.is_rejected():
            return PodShardResult(pod_uid=uid, error=status.message())
        return PodShardResult(pod_uid=uid, prefilter=to_failure(status), rejectors=sorted(rejectors))
    run = fwk.run_filter_plugins_with_nominated_pods
    nominated_failure = None
    nominated_fits: NodeInfo | None = None
    nominated = pod.pod.status.nominated_node_name
    if nominated and nominated in shard_nodes:
        info = snapshot.get(nominated)
        if info is not None:
            s = run(state, pod, info)
            if s is not None and s.code == Code.ERROR:
                return PodShardResult(pod_uid=uid, error=s.message())
            if s is not None and s.code != Code.SUCCESS:
                nominated_failure = to_failure(s, [nominated])
            elif stop_at_nominated:
                nominated_fits = info
    nodes = snapshot.node_info_list
    subset: list[str] | None = None
    if pre_result is not None and not pre_result.all_nodes():
        names = pre_result.node_names or set()
        nodes = [info for info in nodes if info.name in names]
        subset = sorted(names)
    feasible: list[NodeInfo] = []
    failures: list[tuple[str, Status]] | Rejections
    failures = []  # apart from the declaration, so that the walk below knows it for a list
    n = len(nodes)
    indexed: tuple[NodeIndex, Indexes] | None = None
    if nominated_fits is not None:
        # The merge (as upstream) takes a nominated node that passes and reads no walk.
        feasible = [nominated_fits]
    elif n and indexes is not None and subset is None and (rest := filters_after_index(fwk, state, pod)) is not None:
        index = indexes.get(fwk, pod, snapshot)
        try:
            walked = index.walk(fwk, state, pod, start % n, feasible_target(fwk, n), rest, index.mask(shard_nodes))
        except WalkError as exc:
            return PodShardResult(pod_uid=uid, error=exc.status.message())
        feasible, failures = index.nodes_at(walked.feasible), walked.rejected
        indexed = (index, walked.feasible)
    elif n:
        to_find = feasible_target(fwk, n)
        first = start % n
        walk = fwk.node_filter()
        for i in range(n):
            info = nodes[(first + i) % n]
            if info.name not in shard_nodes:
                continue
            s = walk(state, pod, info)
            if s is None or s.code == Code.SUCCESS:
                feasible.append(info)
                if len(feasible) >= to_find:
                    break
            elif s.code == Code.ERROR:
                return PodShardResult(pod_uid=uid, error=s.message())
            else:
                failures.append((info.name, s))
    scores: Mapping[str, Sequence[int] | Column] = {}
    score_error = ""
    scored = bool(feasible) and fwk.has_score_plugins() and (whole or not fwk.pre_score_reads_nodes(pod))
    if scored:
        scores, score_error = _raw_scores(fwk, state, pod, feasible, feasible, indexed)
    result = PodShardResult(pod_uid=uid, scored=scored, score_error=score_error, prefilter_nodes=subset,
                            rejectors=sorted(rejectors), nominated=nominated_failure)
    if packed and indexed is not None and isinstance(failures, Rejections):
        return pack_walk(result, indexed[1], {p: np.asarray(c, dtype=np.int64) for p, c in scores.items()},
                         [(to_failure(status), at) for status, at in failures.position_groups()])
    result = msgspec.structs.replace(
        result, feasible=[info.name for info in feasible], failures=group_failures(failures),
        scores={p: c.tolist() if isinstance(c, np.ndarray) else list(c) for p, c in scores.items()})
    return pack(result, snapshot.position()) if packed else result


def raw_scores_on_shard(fwk: Framework, state: CycleState, pod: PodInfo, snapshot: Snapshot,
                        feasible: list[str], shard_nodes: Collection[str]) -> PodShardResult:
    """Raw scores of this shard's share of `feasible` (PreScore sees all of it)."""
    infos = [info for info in (snapshot.get(n) for n in feasible) if info is not None]
    mine = [info for info in infos if info.name in shard_nodes]
    scores, error = _raw_scores(fwk, state, pod, infos, mine)
    return PodShardResult(pod_uid=pod.uid, feasible=[info.name for info in mine],
                          scores={p: list(c) for p, c in scores.items()}, scored=True, score_error=error)


def _raw_scores(fwk: Framework, state: CycleState, pod: PodInfo, feasible: Sequence[NodeInfo],
                mine: Sequence[NodeInfo], indexed: tuple[NodeIndex, Indexes] | None = None,
                ) -> tuple[dict[str, Sequence[int] | Column], str]:
    """PreScore over `feasible`, then each unskipped plugin's raw scores for `mine`, as columns
    (arrays where read from the index); `indexed` (the index and the positions of `mine` in it):
    read from the index when every score plugin is node-local."""
    s = fwk.run_pre_score_plugins(state, pod, feasible)
    if s is not None and not s.is_success():
        return {}, s.message()
    scorers = fwk.score_plugins_if_node_local(state, pod) if indexed is not None else None
    if indexed is not None and scorers is not None:
        columns = indexed[0].raw_columns(state, pod, scorers, fwk.score_weights, indexed[1])
        return ({}, columns.message()) if isinstance(columns, Status) else (dict(columns), "")
    raw, s = fwk.run_raw_score_plugins(state, pod, mine)
    if s is not None:
        return {}, s.message()
    return dict(raw), ""


def raw_by_plugin(walks: Iterable[Walk]) -> tuple[RawScores, str]:
    """The raw scores of scored walks (their feasible nodes named), or the first one's scoring error."""
    walks = list(walks)
    for w in walks:
        if w.score_error:
            return NO_SCORES, w.score_error
    return RawScores.of([w for w in walks if w.columns]), ""


# --- queue side ---------------------------------------------------------------------------------


@dataclass
class MergedFilter:
    feasible: list[str] = field(default_factory=list)
    diagnosis: Diagnosis = field(default_factory=Diagnosis)
    processed: int = 0
    """Nodes the walk processed (added to the round-robin start); 0 when the nominated node won."""
    advance: bool = False
    error: str = ""
    ranked: bool = False
    """`feasible` is a filter worker's ranking (best first, made on the view it proposed on), to
    be tried in that order, not scored again."""


def merge_filter(fwk: Framework, pod: PodInfo, snapshot: Snapshot, start: int,
                 walks: Iterable[Walk], *, on_snapshot: bool = False) -> MergedFilter:
    """`walks`: each answer's walk, its feasible nodes named (packed failures are read here);
    `on_snapshot`: every walk was made on this snapshot's nodes, walking from `start` (a worker's
    answer read on the view it was made for), so their rejections can be read as positions; one
    such walk covers every node (one worker answered for all the shards). Otherwise the walks are
    merged by node name."""
    walks = list(walks)
    out = MergedFilter()
    d = out.diagnosis
    for w in walks:
        if w.error:
            out.error = w.error
            return out
    rejectors: set[str] = set()
    for w in walks:
        rejectors.update(w.rejectors)
    d.unschedulable_plugins = set(rejectors)
    pre = next((w.prefilter for w in walks if w.prefilter is not None), None)
    if pre is not None:
        d.node_to_status.writable().update(dict.fromkeys(snapshot.names, pre))
        d.pre_filter_msg = pre.message()
        d.add_plugin_status(pre)
        return out
    nominated = pod.pod.status.nominated_node_name
    subset = next((w.prefilter_nodes for w in walks if w.prefilter_nodes is not None), None)
    if on_snapshot and len(walks) == 1 and not nominated and subset is None:
        # The one walk was the global walk: its answer is the merge, the nodes it rejected (packed)
        # kept as arrays.
        w = walks[0]
        rejections = packed_rejections(w.failures, snapshot, start) if w.failures else None
        if rejections is not None or not w.failures:
            out.advance = True
            out.feasible = list(w.feasible)
            out.processed = len(out.feasible)
            if rejections is not None:
                d.add_rejections(rejections)
                out.processed += len(rejections)
            return out
    if on_snapshot and not nominated and subset is None and not any(w.feasible for w in walks):
        # No shard found a node (a preemptor's attempt): the merge is every shard's rejections in
        # walk order, read as arrays. Answers whose shards overlap (a resent request answered for
        # more shards than the first time) name some nodes twice: those merge by name below.
        rejections = packed_rejections([f for w in walks for f in w.failures], snapshot, start)
        if rejections is not None and (len(walks) == 1 or not names_a_node_twice(rejections.positions)):
            out.advance = True
            d.add_rejections(rejections)
            out.processed = len(rejections)
            return out
    feasible_names: set[str] = set()
    for w in walks:
        feasible_names.update(w.feasible)
    if nominated and snapshot.get(nominated) is not None:
        failed = next((w.nominated for w in walks if w.nominated is not None), None)
        if failed is None:
            out.feasible = [nominated]
            return out
        d.node_to_status[nominated] = failed.status
        d.add_plugin_status(failed.status)
    failures = failed_by_name((f for w in walks for f in w.failures), snapshot.names)
    names = snapshot.names
    if subset is not None:
        wanted = set(subset)
        names = [name for name in names if name in wanted]
        d.absent_nodes_status = Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(rejectors))}]",
        )
    out.advance = True
    n = len(names)
    if n == 0:
        return out
    to_find = feasible_target(fwk, n)
    first = start % n
    feasible = out.feasible
    statuses = d.node_to_status.writable()
    for name in chain(names[first:], names[:first]):
        if name in feasible_names:
            feasible.append(name)
            if len(feasible) >= to_find:
                break
        else:
            failed_here = failures.get(name)
            if failed_here is not None:
                statuses[name] = failed_here
    for status in {id(s): s for s in statuses.values()}.values():
        d.add_plugin_status(status)
    out.processed = len(feasible) + len(statuses)
    return out


def names_a_node_twice(positions: npt.NDArray[np.intp]) -> bool:
    """Whether positions in walk order name a node twice (the same node's entries are adjacent)."""
    return bool(len(positions) > 1 and (positions[1:] == positions[:-1]).any())


def finish_scores(fwk: Framework, state: CycleState, pod: PodInfo, snapshot: Snapshot, feasible: list[str],
                  raw: Mapping[str, Mapping[str, int]],
                  placed: PlacedNodes | None = None) -> tuple[list[NodePluginScores], str]:
    """Totals for `feasible` (in walk order) from the shards' raw scores (plugin → node → score);
    `placed`: the batch's placements so far, whose nodes' node-local scores are read again."""
    if not fwk.has_score_plugins():
        return [NodePluginScores(n, [], 1) for n in feasible], ""
    names, columns, error = _score_columns(fwk, state, pod, snapshot, feasible, raw, placed)
    if error:
        return [], error
    scores, s = fwk.finish_scores(state, pod, names, columns)
    return (scores, "") if s is None else ([], s.message())


def finish_totals(fwk: Framework, state: CycleState, pod: PodInfo, snapshot: Snapshot, feasible: list[str],
                  raw: Mapping[str, Mapping[str, int]],
                  placed: PlacedNodes | None = None) -> tuple[list[str], Column, str]:
    """`finish_scores` as plain totals, with the names they belong to (ranking needs no more)."""
    if not fwk.has_score_plugins():
        return list(feasible), np.ones(len(feasible), dtype=np.int64), ""
    names, columns, error = _score_columns(fwk, state, pod, snapshot, feasible, raw, placed)
    if error:
        return [], np.zeros(0, dtype=np.int64), error
    totals, s = fwk.finish_totals(state, pod, names, columns)
    return (names, totals, "") if s is None else ([], totals, s.message())


def _score_columns(fwk: Framework, state: CycleState, pod: PodInfo, snapshot: Snapshot, feasible: list[str],
                   raw: Mapping[str, Mapping[str, int]],
                   placed: PlacedNodes | None) -> tuple[list[str], list[tuple[str, Column]], str]:
    """PreScore on the nodes the snapshot knows, then each active score plugin's raw column."""
    names = known_names(snapshot, feasible)
    s = fwk.run_pre_score_plugins(state, pod, known_infos(snapshot, names))
    if s is not None and not s.is_success():
        return [], [], s.message()
    placed = placed if placed is not None else PlacedNodes()  # none: the walk's columns as they came
    return names, placed.columns(fwk, state, pod, snapshot, names, raw), ""


def known_names(snapshot: Snapshot, feasible: list[str]) -> list[str]:
    """`feasible` without the nodes the snapshot no longer has (itself when it has them all)."""
    known = snapshot.node_info_map
    if all(map(known.__contains__, feasible)):
        return feasible
    return [name for name in feasible if name in known]


def known_infos(snapshot: Snapshot, names: list[str]) -> Sequence[NodeInfo]:
    """The snapshot's nodes `names` (all known), built only if a PreScore plugin reads them."""
    known = snapshot.node_info_map
    return LazyNodes(len(names), lambda: list(map(known.__getitem__, names)))
