"""A batch decided on a filter worker as the queue would decide it: the worker proposes, the
queue validates.

A filter worker answers a proposing request (`FilterBatchRequested.propose`) with this: every pod
is walked on the view at the request's watermark (pods only their names tell apart share one
walk, as in any answer), merged, then decided in order there (`decide_batch`: ranked on the view
with the pods before it placed, re-checked and walked again where those pods took its nodes),
each decision placed on the view before the next. The queue receives a ranking per pod (a few
node names) instead of every feasible node's raw scores, and scores nothing: it places each pod
on its own view, re-checking the ranking where that view moved on since the request. Replay
re-makes the proposals with this same function.

A pod some node fits is answered with its ranking (`ranked`: the node the worker placed it on,
then the others it ranked); any other with its walk's answer (its failed nodes, or the error).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import msgspec

from shared.cluster import ClusterView, point_at
from shared.events import FilterBatchRequested, PodShardResult
from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import NodePluginScores
from shared.framework.pod_info import PodInfo
from shared.framework.runtime import Framework
from shared.framework.snapshot import Snapshot
from shared.indexes.node_index import NodeIndexes
from shared.model import Pod
from shared.scheduler.schedule_one import ScheduleAlgorithm

from .answers import Decided, decode, decode_all, decode_walk
from .batch import BatchItem, Decision, decide_batch
from .merge_batch import merge_batch, ranked_merge
from .raw_scores import NO_SCORES, RawScores
from .same_answers import answer_key, same_as
from .sharded import MergedFilter, filter_on_shard, raw_by_plugin, raw_scores_on_shard


@dataclass
class Proposal:
    """One pod's answer (`result`), with what replay and explain read besides: its walk's answer,
    the merge of it, its raw scores and, when recording, its ranking's weighted scores."""

    info: PodInfo
    fwk: Framework | None
    result: PodShardResult
    walk: PodShardResult
    merged: MergedFilter
    raw: RawScores = field(default_factory=lambda: NO_SCORES)
    scores: list[NodePluginScores] = field(default_factory=list)


def propose_batch(profiles: Mapping[str, Framework], pods: Sequence[Pod], seeds: Sequence[int], start: int,
                  snapshot: Callable[[], Snapshot], assume: Callable[[str, str], None], walker: ScheduleAlgorithm,
                  *, indexes: NodeIndexes | None = None, nominated: Callable[[str], bool] = lambda uid: False,
                  record: bool = False) -> list[Proposal]:
    """Every pod's proposal, in order. `snapshot()` is the view at the request's watermark until
    `assume(uid, node)` places a decided pod on it (`snapshot()` must then show it, the profiles
    pointed at it); `walker` walks again for a pod the ones before it left no candidate;
    `nominated(uid)`: the view's nominator holds the pod (its walk is its own)."""
    view = snapshot()
    infos = [PodInfo(pod) for pod in pods]
    fwks = [profiles.get(pod.spec.scheduler_name) for pod in pods]
    walks = _walks(infos, fwks, view, start, indexes, nominated)
    out = [Proposal(info, fwk, walk, walk, MergedFilter(error=walk.error))
           for info, fwk, walk in zip(infos, fwks, walks)]
    runnable: list[tuple[Framework, Proposal, int]] = []
    for p, seed in zip(out, seeds):
        if p.fwk is not None:
            runnable.append((p.fwk, p, seed))
    answers = decode_all(p.walk for _, p, _ in runnable)
    merge = merge_batch([(fwk, p.info) for fwk, p, _ in runnable],
                        {p.info.uid: [a] for (_, p, _), a in zip(runnable, answers)}, view, start)
    for i, ((fwk, p, _), m) in enumerate(zip(runnable, merge.merged)):
        p.merged, p.raw = m, merge.raw.get(p.info.uid, NO_SCORES)
        if i in merge.to_score:  # a PreScore that reads the feasible set, on a walk not scored whole
            scored = raw_scores_on_shard(fwk, CycleState(), p.info, view, m.feasible, view.node_info_map)
            p.raw, m.error = raw_by_plugin([decode_walk(scored)])
    items = [BatchItem(fwk, p.info, p.merged, p.raw, seed, start=start) for fwk, p, seed in runnable]
    decided = iter(decide_batch(items, snapshot, assume, record=record, walker=walker, may_walk=lambda _: True))
    failed: dict[int, str] = {}
    """Walk (by identity) → the first pod answered with it, which the pods sharing it refer to."""
    for p in out:
        if p.fwk is not None:
            p.result, p.scores = _answer(p, next(decided), failed)
    return out


def propose_on_view(request: FilterBatchRequested, view: ClusterView, profiles: Mapping[str, Framework],
                    walker: ScheduleAlgorithm, *, indexes: NodeIndexes | None = None,
                    record: bool = False) -> list[Proposal]:
    """`propose_batch` for a proposing request on `view` (folded to its watermark, its assumptions
    overlaid): what the worker answers and replay re-makes. The view is given back the request's
    assumptions, the profiles pointed at it."""

    def assume(uid: str, node: str) -> None:
        view.assume(uid, node)
        point_at(profiles.values(), view)

    point_at(profiles.values(), view)
    try:
        return propose_batch(profiles, request.pods, request.seeds, request.starts[0] if request.starts else 0,
                             view.snapshot, assume, walker, indexes=indexes, nominated=view.holds_nomination,
                             record=record)
    finally:
        view.set_assumed((a.pod_uid, a.node_name) for a in request.assumed)
        point_at(profiles.values(), view)


def _walks(infos: Sequence[PodInfo], fwks: Sequence[Framework | None], view: Snapshot, start: int,
           indexes: NodeIndexes | None, nominated: Callable[[str], bool]) -> list[PodShardResult]:
    """Each pod's walk over every node; pods only their names tell apart share one."""
    out: list[PodShardResult] = []
    first: dict[bytes, PodShardResult] = {}
    for info, fwk in zip(infos, fwks):
        if fwk is None:
            out.append(PodShardResult(pod_uid=info.uid,
                                      error=f"no profile serves scheduler {info.pod.spec.scheduler_name!r}"))
            continue
        key = answer_key(info.pod, start, info.signature(), nominated=nominated(info.uid))
        walk = first.get(key) if key is not None else None
        if walk is None:
            walk = filter_on_shard(fwk, CycleState(), info, view, start, view.node_info_map, indexes,
                                   packed=True, stop_at_nominated=True, whole=True)
            if key is not None:
                first[key] = walk
        out.append(walk)
    return out


def _answer(p: Proposal, d: Decision, failed: dict[int, str]) -> tuple[PodShardResult, list[NodePluginScores]]:
    uid = p.info.uid
    walked = p.merged.processed if p.merged.advance else 0
    if d.verdict == "error":
        # A ranking that failed (a Score error) after the walk moved the round-robin start on.
        return PodShardResult(pod_uid=uid, error=d.error, walked=walked), []
    if d.verdict == "fit-error":
        first = failed.setdefault(id(p.walk), uid)
        if first != uid:
            return same_as(uid, first), []
        return (p.walk if p.walk.pod_uid == uid else msgspec.structs.replace(p.walk, pod_uid=uid)), []
    # "bind" leads with the node the pod was placed on; "retry" (no candidate left and none found
    # walking again) offers its ranking still, for the queue's view to judge.
    ranked = [d.host, *(n for n in d.ranked if n != d.host)] if d.host else list(d.ranked)
    return PodShardResult(pod_uid=uid, ranked=ranked, walked=walked), d.scores


def as_decided(p: Proposal) -> MergedFilter:
    """The merge the queue decides a proposal by: its ranking, its error, or its walk's failures."""
    answer = decode(p.result)
    if isinstance(answer, Decided):
        return ranked_merge(answer)
    if p.result.error:
        return MergedFilter(error=p.result.error)
    return p.merged
