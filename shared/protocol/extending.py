"""Scheduler extenders in the distributed scheduler and in replay.

Asking the extenders is I/O (`ask`, blocking: the queue runs it on a worker thread per pod, so the
pods of a cycle wait on their extenders at the same time); what comes back is recorded as
`ExtenderAnswer`s. Applying answers to a pod's merged filter result and scores is pure, so the
queue and replay do exactly the same with the same answers. The semantics are upstream's
findNodesThatPassExtenders and prioritizeNodes, as the in-process `ScheduleAlgorithm` has them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from shared.events import ExtenderAnswer
from shared.framework.interfaces import MAX_NODE_SCORE, NodePluginScores, PluginScore
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.score_columns import Column
from shared.framework.status import Code, Status
from shared.scheduler.schedule_one import EXTENDER_NAME, FilterExtender

from .sharded import MergedFilter

MAX_EXTENDER_PRIORITY = 10


def wants(extenders: Sequence[FilterExtender], pod: PodInfo) -> bool:
    """Whether any extender filters or prioritizes this pod."""
    return any((e.supports_filter() or e.supports_prioritize()) and e.is_interested(pod) for e in extenders)


def ask(extenders: Sequence[FilterExtender], pod: PodInfo, feasible: list[NodeInfo]) -> list[ExtenderAnswer]:
    """Filter through each interested extender in order (a node one rejects is not sent to the
    next), then, when more than one node is left, ask every interested prioritizer."""
    answers: list[ExtenderAnswer] = []
    nodes = feasible
    for ext in extenders:
        if not nodes:
            break
        if not ext.supports_filter() or not ext.is_interested(pod):
            continue
        try:
            kept, failed, unresolvable = ext.filter(pod, nodes)
        except Exception as exc:  # noqa: BLE001 - any failure of the call is the extender's error
            answers.append(ExtenderAnswer(extender=ext.name, verb="filter", error=str(exc), ignored=ext.is_ignorable()))
            if ext.is_ignorable():
                continue
            return answers
        answers.append(ExtenderAnswer(extender=ext.name, verb="filter", kept=[n.name for n in kept],
                                      failed=failed, unresolvable=unresolvable))
        nodes = kept
    if len(nodes) < 2:
        return answers
    for ext in extenders:
        if not ext.supports_prioritize() or not ext.is_interested(pod):
            continue
        try:
            scores, weight = ext.prioritize(pod, nodes)
        except Exception as exc:  # noqa: BLE001 - prioritize errors are ignored, as upstream
            answers.append(ExtenderAnswer(extender=ext.name, verb="prioritize", error=str(exc), ignored=True))
            continue
        answers.append(ExtenderAnswer(extender=ext.name, verb="prioritize", scores=scores, weight=weight))
    return answers


def apply_filters(merged: MergedFilter, answers: Sequence[ExtenderAnswer]) -> None:
    """Narrow the feasible nodes as the answers did (in the extenders' order), with each rejected
    node's status named after its extender; a failed call of a non-ignorable extender fails the
    attempt with its error."""
    if merged.error:
        return
    before = len(merged.feasible)
    d = merged.diagnosis
    for a in answers:
        if a.verb != "filter":
            continue
        if a.error:
            if a.ignored:
                continue
            merged.error = a.error
            return
        for name, reason in a.unresolvable.items():
            d.node_to_status[name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason, plugin=a.extender)
        for name, reason in a.failed.items():
            if name not in a.unresolvable:
                d.node_to_status[name] = Status(Code.UNSCHEDULABLE, reason, plugin=a.extender)
        current = set(merged.feasible)
        merged.feasible = [n for n in a.kept if n in current]
    if len(merged.feasible) != before:
        d.unschedulable_plugins.add(EXTENDER_NAME)


def add_priority_totals(names: Sequence[str], totals: Column, answers: Sequence[ExtenderAnswer]) -> None:
    """`add_priorities` on plain totals (`totals[i]` belongs to `names[i]`)."""
    index: dict[str, int] | None = None
    for a in answers:
        if a.verb != "prioritize" or a.error:
            continue
        if index is None:
            index = {n: i for i, n in enumerate(names)}
        for name, score in a.scores.items():
            i = index.get(name)
            if i is not None:
                totals[i] += score * a.weight * (MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY)


def add_priorities(scores: list[NodePluginScores], answers: Sequence[ExtenderAnswer], *, record: bool) -> None:
    """Each prioritizer's score × its weight × (MaxNodeScore / MaxExtenderPriority), added to the
    nodes' totals."""
    by_name: Mapping[str, NodePluginScores] = {s.name: s for s in scores}
    for a in answers:
        if a.verb != "prioritize" or a.error:
            continue
        for name, score in a.scores.items():
            entry = by_name.get(name)
            if entry is not None:
                weighted = score * a.weight * (MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY)
                entry.total_score += weighted
                if record:
                    entry.scores.append(PluginScore(a.extender, weighted))
