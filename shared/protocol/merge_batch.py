"""A batch's shard answers merged into one filter verdict per pod, with its raw scores: the
queue's half of a scatter/gather filter phase, pure (the queue service and tests run it alike).

The answers come decoded (shared.protocol.answers). A decision (a pod's ranking, from a worker
that decided the batch) is taken as it is. Packed walks made on the queue's view go through
`merge_packed` (arrays, work per pod independent of the number of answers), one merge for the
pods that share their answers; the others are named and walked node by node (`merge_filter`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from shared.framework.pod_info import PodInfo
from shared.framework.runtime import Framework
from shared.framework.snapshot import Snapshot

from .answers import Answer, Decided, Walk, walks
from .merge_positions import PackedMerge, merge_packed, mergeable
from .raw_scores import RawScores
from .sharded import MergedFilter, merge_filter, raw_by_plugin


@dataclass
class BatchMerge:
    merged: list[MergedFilter]
    raw: dict[str, RawScores] = field(default_factory=dict)
    """Raw scores by pod uid, for pods with two or more feasible nodes whose answers were scored."""
    to_score: list[int] = field(default_factory=list)
    """Positions (in the batch) of pods whose PreScore reads the feasible set: a score phase asks."""


def merge_batch(pods: Sequence[tuple[Framework, PodInfo]], filtered: Mapping[str, list[Answer]],
                snapshot: Snapshot, start: int) -> BatchMerge:
    """`pods` in batch order; `filtered`: every answer per pod uid (an answer identical pods share
    is one object); `snapshot`: the view at the request's watermark."""
    out = BatchMerge([])
    kept: dict[tuple[int, ...], PackedMerge | None] = {}
    named: dict[int, tuple[Walk, Walk]] = {}
    shared_raw: dict[int, tuple[RawScores, str]] = {}
    for i, (fwk, info) in enumerate(pods):
        answers = filtered.get(info.uid, [])
        if len(answers) == 1 and isinstance(answers[0], Decided):
            out.merged.append(ranked_merge(answers[0]))
            continue
        results = walks(answers)
        on_ours = all(w.on_view for w in results)
        fast = None
        if on_ours and mergeable(results, info.pod.status.nominated_node_name):
            key = (id(fwk), *map(id, answers))  # the answers, which `filtered` keeps alive
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
        opened = [_named(w, snapshot, named) for w in results]
        m = merge_filter(fwk, info, snapshot, start, opened, on_snapshot=on_ours)
        out.merged.append(m)
        if len(m.feasible) < 2 or m.error:
            continue
        if not all(w.scored or not w.feasible for w in opened):
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


def ranked_merge(decided: Decided) -> MergedFilter:
    """A worker's decision as the merge it is decided by: its ranking, tried in order, or the error
    its ranking failed with after the walk."""
    return MergedFilter(feasible=list(decided.ranked), processed=decided.walked, advance=True, ranked=True,
                        error=decided.error)


def _named(walk: Walk, snapshot: Snapshot, done: dict[int, tuple[Walk, Walk]]) -> Walk:
    """The walk with its feasible nodes named (its failures stay packed: `merge_filter` reads
    them); a walk that identical pods share is named once. Each entry holds its walk, so no other
    walk made during the merge can reuse the id that keys it."""
    kept = done.get(id(walk))
    if kept is None:
        kept = done[id(walk)] = (walk, walk.named(snapshot.names))
    return kept[1]
