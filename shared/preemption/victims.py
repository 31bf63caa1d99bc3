"""Victims, their ordering, PodDisruptionBudget accounting and the choice of one candidate node
(upstream preemption.go pickOneNodeForPreemption, util.MoreImportantPod, GetEarliestPodStartTime,
and defaultpreemption's filterPodsWithPDBViolation)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from functools import lru_cache
from itertools import islice
from typing import Any

from shared.framework.pod_info import PodInfo
from shared.model.selectors import Selector, compile_label_selector

# Added to every priority before summing, so that several negative-priority victims never sum
# lower than fewer victims of the same priority.
_PRIORITY_SHIFT = 2**31
RANK_FIELDS = 5  # the length of `Victims.rank()`
_NOT_STARTED = math.inf


class Victims:
    """The pods to evict on one node and how many of them violate a PodDisruptionBudget
    (extender/v1 Victims). Pods are ordered from most to least important. Never changed once
    made: remembered dry runs share one Victims between preemptors."""

    __slots__ = ("pods", "num_pdb_violations", "_rank")

    def __init__(self, pods: Sequence[PodInfo], num_pdb_violations: int = 0) -> None:
        self.pods = list(pods)
        self.num_pdb_violations = num_pdb_violations
        self._rank: tuple[float, ...] | None = None

    def rank(self) -> tuple[float, ...]:
        """The default criteria's scores in order of precedence (see `default_score_funcs`);
        the greater tuple is the better node."""
        if self._rank is None:
            pods = self.pods
            earliest = earliest_pod_start_time(self)
            self._rank = (
                -self.num_pdb_violations,
                -pods[0].priority if pods else 0,
                -sum(p.priority + _PRIORITY_SHIFT for p in pods),
                -len(pods),
                -math.inf if earliest is None else earliest,
            )
        return self._rank

    def __repr__(self) -> str:
        return f"Victims({[p.key for p in self.pods]}, pdb_violations={self.num_pdb_violations})"


class Candidate:
    """A node the preemptor could be nominated to, with the victims that make room there."""

    __slots__ = ("name", "victims")

    def __init__(self, name: str, victims: Victims) -> None:
        self.name = name
        self.victims = victims

    def __repr__(self) -> str:
        return f"Candidate({self.name}, {self.victims!r})"


@lru_cache(maxsize=4096)
def _parse_time(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def pod_start_time(pod: PodInfo) -> float:
    """Seconds since the epoch; a pod that has not started counts as starting now, i.e. after
    every recorded start (upstream GetPodStartTime falls back to time.Now())."""
    if not pod.start_time:
        return _NOT_STARTED
    try:
        return _parse_time(pod.start_time)
    except ValueError:
        return _NOT_STARTED


def importance_key(pod: PodInfo) -> tuple[int, float]:
    """Sort key putting more important pods first: higher priority, then earlier start."""
    return (-pod.priority, pod_start_time(pod))


def more_important_pod(a: PodInfo, b: PodInfo) -> bool:
    """util.MoreImportantPod."""
    if a.priority != b.priority:
        return a.priority > b.priority
    return pod_start_time(a) < pod_start_time(b)


def earliest_pod_start_time(victims: Victims) -> float | None:
    """The earliest start among the highest-priority victims (util.GetEarliestPodStartTime)."""
    if not victims.pods:
        return None
    max_priority = victims.pods[0].priority
    earliest = pod_start_time(victims.pods[0])
    for pod in victims.pods:
        if pod.priority == max_priority:
            earliest = min(earliest, pod_start_time(pod))
        elif pod.priority > max_priority:
            max_priority = pod.priority
            earliest = pod_start_time(pod)
    return earliest


def _pdb_selector(pdb: Any) -> Selector | None:
    """The PDB's selector, or None when it can match no pod (nil, empty or invalid)."""
    try:
        selector = compile_label_selector(pdb.spec.selector)
    except ValueError:
        return None
    if selector.nothing or selector.empty:
        return None
    return selector


def filter_pods_with_pdb_violation(
    pods: Sequence[PodInfo], pdbs: Sequence[Any]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """Split pods into those whose eviction would violate a PDB and the rest, keeping order.

    Each matching PDB's disruptionsAllowed is decremented per pod, so the later pods of a
    budget are the violating ones; a pod already in the PDB's disruptedPods was accounted for
    by the API server and neither decrements nor violates.
    """
    selectors = [_pdb_selector(pdb) for pdb in pdbs]
    allowed = [pdb.status.disruptions_allowed if pdb.status is not None else 0 for pdb in pdbs]
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for pod in pods:
        violated = False
        if pod.labels:  # a pod without labels matches no PDB
            for i, pdb in enumerate(pdbs):
                selector = selectors[i]
                if pdb.metadata.namespace != pod.namespace or selector is None or not selector.matches(pod.labels):
                    continue
                if pdb.status is not None and pod.name in pdb.status.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(pod)
    return violating, non_violating


ScoreFunc = Callable[[str], float]


def default_score_funcs(nodes_to_victims: Mapping[str, Victims]) -> list[ScoreFunc]:
    """Criteria in order of precedence; each prefers the higher score."""

    def fewest_pdb_violations(node: str) -> float:
        return -nodes_to_victims[node].num_pdb_violations

    def lowest_highest_priority(node: str) -> float:
        return -nodes_to_victims[node].pods[0].priority

    def smallest_priority_sum(node: str) -> float:
        return -sum(p.priority + _PRIORITY_SHIFT for p in nodes_to_victims[node].pods)

    def fewest_victims(node: str) -> float:
        return -len(nodes_to_victims[node].pods)

    def latest_start_time(node: str) -> float:
        earliest = earliest_pod_start_time(nodes_to_victims[node])
        return -math.inf if earliest is None else earliest

    return [fewest_pdb_violations, lowest_highest_priority, smallest_priority_sum, fewest_victims,
            latest_start_time]


def pick_one_node_for_preemption(
    nodes_to_victims: Mapping[str, Victims], score_funcs: Sequence[ScoreFunc] | None = None
) -> str:
    """The node whose victims hurt least: each criterion keeps the nodes with its best score,
    the next one breaks ties, and the first remaining node wins. With the default criteria that
    is the first node whose `Victims.rank` is greatest, each rank computed once per Victims."""
    if not nodes_to_victims:
        return ""
    if not score_funcs:
        ranks = list(map(Victims.rank, nodes_to_victims.values()))
        return next(islice(nodes_to_victims, ranks.index(max(ranks)), None))  # the first of the greatest
    remaining = list(nodes_to_victims)
    for score in score_funcs:
        best = -math.inf
        selected: list[str] = []
        for node in remaining:
            s = score(node)
            if s > best:
                best, selected = s, []
            if s == best:
                selected.append(node)
        if len(selected) == 1:
            return selected[0]
        remaining = selected
    return remaining[0]


__all__ = [
    "Candidate", "Victims", "default_score_funcs", "earliest_pod_start_time", "filter_pods_with_pdb_violation",
    "importance_key", "more_important_pod", "pick_one_node_for_preemption", "pod_start_time",
]
