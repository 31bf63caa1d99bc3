"""Rebuilding the state a recorded decision was made on, and re-making one attempt in-process.

A filter request names its state exactly: the log folded up to its watermark (gated topics, topic
by topic and partition by partition, as the services' followers fold them) with the queue's
in-flight assumptions overlaid. `LogFolder` folds a `ClusterView` forwards through such states;
`evaluate` re-runs one pod's attempt on it as one shard holding every node, which the sharded
merge equates with the in-process walk.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from shared.cluster import ClusterView
from shared.events import GATED_TOPICS, FilterBatchRequested, PodShardResult
from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import NodePluginScores
from shared.framework.pod_info import PodInfo
from shared.framework.runtime import Framework
from shared.framework.snapshot import Snapshot
from shared.model import Pod
from shared.protocol.answers import decode_walk
from shared.protocol.proposing import as_decided, propose_on_view
from shared.protocol.same_answers import answer_key
from shared.protocol.sharded import (
    MergedFilter,
    filter_on_shard,
    merge_filter,
    raw_by_plugin,
    raw_scores_on_shard,
)
from shared.scheduler.schedule_one import ScheduleAlgorithm

from .history import History


class LogFolder:
    """Folds a view forwards from the history, exactly up to each watermark it is given."""

    def __init__(self, history: History, view: ClusterView | None = None) -> None:
        self.history = history
        self.view = view or ClusterView()
        self._next: dict[tuple[str, int], int] = {}

    def advance_to(self, watermark: Mapping[str, list[int]]) -> None:
        for topic in GATED_TOPICS:
            for partition, end in enumerate(watermark.get(topic, [])):
                events = self.history.partitions.get((topic, partition), [])
                i = self._next.get((topic, partition), 0)
                while i < len(events) and events[i].position.offset < end:
                    self.view.apply(events[i].envelope, events[i].position)
                    i += 1
                self._next[(topic, partition)] = i


@dataclass
class Evaluation:
    """One pod's attempt re-made: the walk's verdicts (as one shard's answer), its merge, raw scores."""

    info: PodInfo
    fwk: Framework | None
    result: PodShardResult
    merged: MergedFilter
    raw: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    state: CycleState = field(default_factory=CycleState)
    scores: list[NodePluginScores] = field(default_factory=list)
    """A proposal's ranking's weighted scores (when recorded)."""


def evaluate(profiles: Mapping[str, Framework], pod: Pod, snapshot: Snapshot, start: int,
             every_node: Collection[str], info: PodInfo | None = None) -> Evaluation:
    """`info`: the pod's PodInfo, where it is made already."""
    info = PodInfo(pod) if info is None else info
    fwk = profiles.get(pod.spec.scheduler_name)
    state = CycleState()
    if fwk is None:
        error = f"no profile serves scheduler {pod.spec.scheduler_name!r}"
        return Evaluation(info, None, PodShardResult(pod_uid=info.uid, error=error), MergedFilter(error=error))
    result = filter_on_shard(fwk, state, info, snapshot, start, every_node, stop_at_nominated=True)
    walk = decode_walk(result)
    merged = merge_filter(fwk, info, snapshot, start, [walk], on_snapshot=True)
    raw: Mapping[str, Mapping[str, int]] = {}
    if len(merged.feasible) > 1 and not merged.error:
        if walk.scored:
            raw, merged.error = raw_by_plugin([walk])
        else:
            scored = raw_scores_on_shard(fwk, state, info, snapshot, merged.feasible, every_node)
            raw, merged.error = raw_by_plugin([decode_walk(scored)])
    return Evaluation(info, fwk, result, merged, raw, state)


def evaluate_batch(profiles: Mapping[str, Framework], request: FilterBatchRequested, view: ClusterView,
                   alone: Collection[str] = ()) -> list[Evaluation]:
    """Every pod of a filter request evaluated on `view` (at the request's watermark), as its
    worker answered it: pods that only their names tell apart (`answer_key`: spec, labels,
    status, the walk's start; not a pod the nominator holds) share the first one's walk, raw
    scores and merge, which are theirs too. Pods in `alone` (those an extender answered, whose
    merge is narrowed pod by pod) are evaluated on their own."""
    snapshot = view.snapshot()
    every_node = set(snapshot.node_info_map)
    starts = request.starts
    out: list[Evaluation] = []
    first: dict[bytes, Evaluation] = {}
    for i, pod in enumerate(request.pods):
        start = starts[i] if i < len(starts) else 0
        info = PodInfo(pod)
        uid = info.uid
        key = None if uid in alone else answer_key(pod, start, info.signature(),
                                                    nominated=view.holds_nomination(uid))
        same = first.get(key) if key is not None else None
        if same is not None:
            out.append(Evaluation(info, same.fwk, same.result, _own_merge(same.merged), same.raw, same.state))
            continue
        e = evaluate(profiles, pod, snapshot, start, every_node, info)
        out.append(e)
        if key is not None:
            first[key] = e
    return out


def _own_merge(merged: MergedFilter) -> MergedFilter:
    """A merge another pod's walk gave, as this pod's own: the fields a decision or its report
    sets (its diagnosis's messages and plugin sets) are its own; the nodes' statuses, which
    nothing changes once merged, are shared."""
    own = copy.copy(merged)
    diagnosis = own.diagnosis = copy.copy(merged.diagnosis)
    diagnosis.unschedulable_plugins = set(diagnosis.unschedulable_plugins)
    diagnosis.pending_plugins = set(diagnosis.pending_plugins)
    return own


def propose_again(request: FilterBatchRequested, view: ClusterView, profiles: Mapping[str, Framework],
                  *, record: bool = False) -> list[Evaluation]:
    """A proposed batch's proposals re-made on `view` (at the request's watermark, its assumptions
    overlaid), as its worker made them; the view is given back those assumptions."""
    proposals = propose_on_view(request, view, profiles, ScheduleAlgorithm(random.Random(0)), record=record)
    return [Evaluation(p.info, p.fwk, p.walk, as_decided(p), p.raw, scores=p.scores) for p in proposals]
