"""A batch's shard answers merged into one filter verdict per pod, with its raw scores: the
queue's half of a scatter/gather filter phase, pure (the queue service and tests run it alike).

A proposal (a pod's ranking, from a worker that decided the batch) is taken as it is.
Packed answers made on the queue's view go through `merge_packed` (arrays, work per pod
independent of the number of answers), one merge for the pods that share their answers; the
others are named and walked node by node (`merge_filter`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from shared.events import PodShardResult
from shared.framework.pod_info import PodInfo
from shared.framework.runtime import Framework
from shared.framework.snapshot import Snapshot

from .merge_positions import PackedMerge, merge_packed, mergeable
from .packing import unpack
from .raw_scores import RawScores
from .sharded import MergedFilter, merge_filter, raw_by_plugin


@dataclass
class BatchMerge:
    merged: list[MergedFilter]
    raw: dict[str, RawScores] = field(default_factory=dict)
    """Raw scores by pod uid, for pods with two or more feasible nodes whose answers were scored."""
    to_score: list[int] = field(default_factory=list)
    """Positions (in the batch) of pods whose PreScore reads the feasible set: a score phase asks."""


def on_view(result: PodShardResult) -> bool:
    """Whether a result was made on the view at the request's watermark: packed, or naming no node."""
    return bool(result.feasible_at) or any(f.at for f in result.failures) or not (result.feasible or result.failures)


def merge_batch(pods: Sequence[tuple[Framework, PodInfo]], filtered: Mapping[str, list[PodShardResult]],
                snapshot: Snapshot, start: int) -> BatchMerge:
    """`pods` in batch order; `filtered`: every answer's result per pod uid (a result identical
    pods share is one object); `snapshot`: the view at the request's watermark."""
    out = BatchMerge([])
    kept: dict[tuple[int, ...], PackedMerge | None] = {}
    named: dict[int, PodShardResult] = {}
    shared_raw: dict[int, tuple[RawScores, str]] = {}
    for i, (fwk, info) in enumerate(pods):
        results = filtered.get(info.uid, [])
        if len(results) == 1 and (results[0].ranked or results[0].walked):
            out.merged.append(ranked_merge(results[0]))
            continue
        on_ours = all(map(on_view, results))
        fast = None
        if on_ours and mergeable(results, info.pod.status.nominated_node_name):
            key = (id(fwk), *map(id, results))
            if key not in kept:
                kept[key] = merge_packed(fwk, snapshot, start, results)
            fast = kept[key]
        if fast is not None:
            m = fast.merged()
            out.merged.append(m)
            if len(m.feasible) >= 2:
                if fast.raw is None:
                    out.to_score.append(i)
                else:
                    out.raw[info.uid], m.error = fast.raw, fast.score_error
            continue
        opened = [_named(r, snapshot, named) for r in results]
        m = merge_filter(fwk, info, snapshot, start, opened, on_snapshot=on_ours)
        out.merged.append(m)
        if len(m.feasible) < 2 or m.error:
            continue
        if not all(r.scored or not r.feasible for r in opened):
            out.to_score.append(i)
            continue
        one = id(opened[0]) if len(opened) == 1 else None
        scored = shared_raw.get(one) if one is not None else None
        if scored is None:
            scored = raw_by_plugin(opened)
            if one is not None:
                shared_raw[one] = scored
        out.raw[info.uid], m.error = scored
    return out


def ranked_merge(result: PodShardResult) -> MergedFilter:
    """A worker's decision (an answer to a proposing request) as the merge it is decided by: its
    ranking, tried in order, or the error its ranking failed with after the walk."""
    return MergedFilter(feasible=list(result.ranked), processed=result.walked, advance=True, ranked=True,
                        error=result.error)


def _named(result: PodShardResult, snapshot: Snapshot, done: dict[int, PodShardResult]) -> PodShardResult:
    """The result with its feasible nodes named (score columns and failed nodes stay packed:
    `merge_filter` reads them); a result that identical pods share is opened once."""
    opened = done.get(id(result))
    if opened is None:
        opened = done[id(result)] = unpack(result, snapshot.names, scores=False, failures=False)
    return opened
