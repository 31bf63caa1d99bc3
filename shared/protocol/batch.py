"""Deciding a batch of merged filter results in queue order: the queue service runs this on its live
view, replay on the view rebuilt from the log, so both decide alike.

Each pod's feasible nodes are scored (PreScore on the view as it is at that point of the batch, so
it counts the pods decided before it) and ranked: the seeded pick among the best totals first, then
the next best. A pod decided after another pod of the batch was placed is re-checked (PreFilter and
Filter on that view) and falls back down its ranking. When every candidate is taken, a pod the
caller lets walk again (`may_walk`) is scheduled afresh on the view as it is, as the in-process
scheduler would schedule it there; otherwise, or when nothing fits, it is retried.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from shared.events import ExtenderAnswer
from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import NodePluginScores
from shared.framework.pod_info import PodInfo
from shared.framework.runtime import Framework
from shared.framework.snapshot import Snapshot
from shared.scheduler.fit_error import FitError, NoNodesAvailable
from shared.scheduler.schedule_one import ScheduleAlgorithm, SchedulingError

from .extending import add_priorities, add_priority_totals
from .placed_nodes import PlacedNodes
from .sharded import MergedFilter, finish_scores, finish_totals
from .shared_totals import Ranking, SharedTotals

Verdict = Literal["bind", "fit-error", "error", "retry"]


@dataclass
class BatchItem:
    fwk: Framework
    info: PodInfo
    merged: MergedFilter
    raw: Mapping[str, Mapping[str, int]]
    """Plugin → node → raw score, from the shards (or computed in-process)."""
    seed: int
    extenders: Sequence[ExtenderAnswer] = ()
    """The extenders' answers for this pod (their filters are applied to `merged` already)."""
    start: int = 0
    """The round-robin start the shards walked from."""
    ranked_scores: Sequence[NodePluginScores] = ()
    """A ranking's weighted scores per plugin (`merged.ranked`, kept when it was made recording)."""


@dataclass
class Decision:
    verdict: Verdict
    host: str = ""
    error: str = ""
    fit: FitError | None = None
    scores: list[NodePluginScores] = field(default_factory=list)
    ranked: list[str] = field(default_factory=list)
    walked_again: bool = False
    """The pod walked again on the view (`walk_again`): its ranked candidates were all taken."""


def rank(item: BatchItem, snapshot: Snapshot, *, record: bool = False,
         shared: SharedTotals | None = None) -> tuple[list[str], list[NodePluginScores], str]:
    """The feasible nodes to try, best first (the seeded pick, then up to MAX_FALLBACKS more);
    `record` keeps each plugin's weighted score per node (explain, replay's reports); `shared`:
    the batch decision's placements so far (`PlacedNodes`) and, unless `record`, the totals the
    pods answered by one walk share."""
    feasible = item.merged.feasible
    if item.merged.ranked:
        return list(feasible), list(item.ranked_scores), ""
    if len(feasible) < 2:
        return list(feasible), [], ""
    state = CycleState()
    state.record_scores = record
    if shared is None:
        shared = SharedTotals()
    if not record:
        return _rank_totals(item, state, snapshot, shared)
    scores, error = finish_scores(item.fwk, state, item.info, snapshot, feasible, item.raw, shared.placed)
    if error:
        return [], [], error
    add_priorities(scores, item.extenders, record=record)
    totals = np.fromiter((s.total_score for s in scores), dtype=np.int64, count=len(scores))
    return Ranking.of([s.name for s in scores], totals).pick(item.seed), scores, ""


def _rank_totals(item: BatchItem, state: CycleState, snapshot: Snapshot,
                 shared: SharedTotals) -> tuple[list[str], list[NodePluginScores], str]:
    """`rank` without the per-node score objects: the same pick and fallbacks, from plain totals."""
    if not item.extenders and item.fwk.has_score_plugins():
        ranking = shared.rank(item.fwk, state, item.info, snapshot, item.merged.feasible, item.raw)
        if isinstance(ranking, str):
            return [], [], ranking
        return ranking.pick(item.seed), [], ""
    names, totals, error = finish_totals(item.fwk, state, item.info, snapshot, item.merged.feasible, item.raw,
                                         shared.placed)
    if error:
        return [], [], error
    add_priority_totals(names, totals, item.extenders)
    return Ranking.of(names, totals).pick(item.seed), [], ""


def first_still_fitting(fwk: Framework, info: PodInfo, snapshot: Snapshot, ranked: Sequence[str],
                        unchanged_below: int | None = None,
                        prefiltered: dict[tuple[int, bytes], CycleState] | None = None) -> str:
    """The first of `ranked` that still passes Filter (nominated pods counted) on `snapshot`, or "".
    PreFilter runs once for all of them, as in one scheduling cycle: the view does not change
    between them, and a PreFilter over every pod (InterPodAffinity) is most of a check's cost.
    `unchanged_below`: the ranked nodes passed on the view whose generation mark this is (their
    walk's). Where the pod's verdicts read nothing but the pod and the node
    (`Framework.pre_filter_alike`), one whose NodeInfo has not changed since, with no pod Filter
    would count nominated to it, passes as it did and is not checked again.
    `prefiltered`: PreFilter's states by profile and pod spec, kept for the pods (of one batch
    decision) whose PreFilter outcome is their spec's alone (`Framework.pre_filter_alike`): a pod
    of a spec seen before filters with that state instead of running PreFilter again."""
    state: CycleState | None = None
    alike: bool | None = None  # asked once, and only where it matters
    for name in ranked:
        node = snapshot.get(name)
        if node is None:
            continue
        if unchanged_below is not None and node.generation < unchanged_below:
            if alike is None:
                alike = fwk.pre_filter_alike(info)
            if alike and not fwk.counted_nominations(info, name):
                return name
        if state is None:
            if prefiltered is not None and alike is None:
                alike = fwk.pre_filter_alike(info)
            spec = (id(fwk), info.signature()) if prefiltered is not None and alike else None
            state = prefiltered.get(spec) if prefiltered is not None and spec is not None else None
            if state is None:
                state = CycleState()
                _, status, _ = fwk.run_pre_filter_plugins(state, info)
                if status is not None and not status.is_success():
                    return ""
                if prefiltered is not None and spec is not None:
                    prefiltered[spec] = state
        status = fwk.run_filter_plugins_with_nominated_pods(state, info, node)
        if status is None or status.is_success():
            return name
    return ""


def walk_again(walker: ScheduleAlgorithm, item: BatchItem, snapshot: Snapshot, *,
               record: bool = False) -> tuple[str, list[NodePluginScores]]:
    """The pod's attempt made afresh on `snapshot`, as the in-process scheduler makes it (from the
    shards' start, ties broken by the attempt's seed): the node, or "" when none fits, and when
    `record`, the walk's weighted scores per plugin."""
    walker.rng.seed(item.seed)
    walker.next_start_node_index = item.start
    state = CycleState()
    state.record_scores = record
    try:
        result = walker.schedule_pod(item.fwk, state, item.info, snapshot)
    except (FitError, NoNodesAvailable, SchedulingError):
        return "", []
    return result.suggested_host, result.scores if record else []


def decide_batch(items: Sequence[BatchItem], snapshot: Callable[[], Snapshot],
                 assume: Callable[[str, str], None], *, placed_before: bool = False,
                 record: bool = False, walker: ScheduleAlgorithm | None = None,
                 may_walk: Callable[[BatchItem], bool] | None = None,
                 shared: SharedTotals | None = None, unchanged_below: int | None = None,
                 placed_on: Sequence[str] = ()) -> list[Decision]:
    """One decision per item, in order; `assume(uid, node)` places a bound pod on the view before
    the next item is decided (`snapshot()` must then show it). `placed_before`: a pod of the batch
    was placed before the first item (explain decides one pod in the middle of a batch).

    `walker` and `may_walk`: a re-checked pod none of whose ranked candidates fits any more (taken
    by pods decided before it, or, in a batch decided on a view that moved on, by the events since),
    and that `may_walk` allows, walks again on the view as it is (`walk_again`) instead of waiting
    for the next cycle, so the pods of a batch that all want the same few nodes (the least-loaded
    zone a spread constraint allows) are placed in one cycle. The queue allows it where no waiting
    pod would be scheduled first; replay where the queue recorded a decision. Such a decision
    carries the walk's scores (when `record`), not the ranking's: the walk chose it.

    `shared`: the rankings and placements of a batch decided in parts (the view's nodes unchanged
    between them), so that its later parts rank from the totals its first computed and read again
    the node-local scores of the nodes it placed pods on (`PlacedNodes`). `placed_on`: the nodes
    the batch's pods decided before the first item were placed on (explain decides one pod of a
    batch alone).

    `unchanged_below`: the generation mark (`generation_mark`) of the view the items' walks were
    made on, when it is known to be that view: a re-check passes a walked node unchanged since
    without running the filters again (`first_still_fitting`). The decisions are the same."""
    out: list[Decision] = []
    prefiltered: dict[tuple[int, bytes], CycleState] = {}
    if shared is None:
        shared = SharedTotals(PlacedNodes(placed_on))
    for item in items:
        m = item.merged
        if m.error:
            out.append(Decision("error", error=m.error))
            continue
        if not m.feasible:
            fit = FitError(item.info.key, snapshot().num_nodes(), m.diagnosis)
            out.append(Decision("fit-error", fit=fit))
            continue
        ranked, scores, error = rank(item, snapshot(), record=record, shared=shared)
        if error:
            out.append(Decision("error", error=error))
            continue
        host = ranked[0]
        walked_again = False
        if placed_before:
            host = first_still_fitting(item.fwk, item.info, snapshot(), ranked,
                                       None if m.ranked else unchanged_below, prefiltered)
            if not host and walker is not None and not item.extenders and may_walk is not None and may_walk(item):
                host, walked = walk_again(walker, item, snapshot(), record=record)
                walked_again = True
                if host:
                    ranked, scores = [host], walked
            if not host:
                # Every candidate was taken by pods decided earlier in this batch: try again at once.
                out.append(Decision("retry", scores=scores, ranked=ranked, walked_again=walked_again))
                continue
        assume(item.info.uid, host)
        shared.placed.placed(host)
        placed_before = True
        out.append(Decision("bind", host=host, scores=scores, ranked=ranked, walked_again=walked_again))
    return out
