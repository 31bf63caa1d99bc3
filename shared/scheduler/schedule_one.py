"""One scheduling attempt for one pod, as upstream's schedulePod: PreFilter, Filter (from the
nominated node first, then round-robin over a share of the nodes), Score, and a seeded pick among
the best. Pure: the caller hands in the framework, the snapshot and the random source."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Protocol

from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import NodePluginScores, PluginScore, ScorePlugin
from shared.framework.lazy_nodes import LazyNodes
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.runtime import Framework
from shared.framework.snapshot import Snapshot
from shared.framework.status import Code, Status
from shared.indexes.node_index import Indexes, NodeIndex, NodeIndexes, WalkError, filters_after_index

from .fit_error import Diagnosis, FitError, NoNodesAvailable

MIN_FEASIBLE_NODES_TO_FIND = 100
EXTENDER_NAME = "Extender"
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


class SchedulingError(Exception):
    """A plugin failed with an Error status (not a "does not fit")."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message())
        self.status = status


class FilterExtender(Protocol):
    """The part of an HTTP extender the scheduling cycle calls (see shared.extender)."""

    name: str

    def is_interested(self, pod: PodInfo) -> bool: ...

    def is_ignorable(self) -> bool: ...

    def supports_filter(self) -> bool: ...

    def supports_prioritize(self) -> bool: ...

    def filter(self, pod: PodInfo, nodes: list[NodeInfo]) -> tuple[list[NodeInfo], dict[str, str], dict[str, str]]: ...

    def prioritize(self, pod: PodInfo, nodes: list[NodeInfo]) -> tuple[dict[str, int], int]: ...


class ScheduleResult:
    __slots__ = ("suggested_host", "evaluated_nodes", "feasible_nodes", "scores", "diagnosis")

    def __init__(self, suggested_host: str, evaluated_nodes: int, feasible_nodes: int,
                 scores: list[NodePluginScores], diagnosis: Diagnosis) -> None:
        self.suggested_host = suggested_host
        self.evaluated_nodes = evaluated_nodes
        self.feasible_nodes = feasible_nodes
        self.scores = scores
        self.diagnosis = diagnosis


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """How many feasible nodes to look for before scoring (upstream's adaptive percentage)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage or 0
    if pct == 0:
        pct = 50 - num_all_nodes // 125
        if pct < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            pct = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    num = num_all_nodes * pct // 100
    if num < MIN_FEASIBLE_NODES_TO_FIND:
        return MIN_FEASIBLE_NODES_TO_FIND
    return num


class ScheduleAlgorithm:
    """Holds what survives between cycles: the round-robin start index and the random source."""

    def __init__(self, rng: random.Random, extenders: Sequence[FilterExtender] = ()) -> None:
        self.rng = rng
        self.next_start_node_index = 0
        self.extenders = list(extenders)
        self._indexes = NodeIndexes()
        # The last indexed walk: its feasible list, the index, and their positions in it.
        self._walked: tuple[LazyNodes, NodeIndex, Indexes] | None = None

    def schedule_pod(self, fwk: Framework, state: CycleState, pod: PodInfo, snapshot: Snapshot) -> ScheduleResult:
        """The chosen node, or raises FitError / NoNodesAvailable / SchedulingError."""
        self._walked = None
        if snapshot.num_nodes() == 0:
            raise NoNodesAvailable()
        feasible, diagnosis = self.find_nodes_that_fit_pod(fwk, state, pod, snapshot)
        if not feasible:
            raise FitError(pod.key, snapshot.num_nodes(), diagnosis)
        if len(feasible) == 1:
            return ScheduleResult(feasible[0].name, 1 + len(diagnosis.node_to_status), 1, [], diagnosis)
        walked, self._walked = self._walked, None
        scores: list[NodePluginScores] = []
        if walked is not None and walked[0] is feasible and fwk.has_score_plugins():
            self._pre_score(fwk, state, pod, feasible)
            # The index gives totals alone: a caller recording per-plugin scores takes the plain path.
            scorers = None if state.record_scores else fwk.score_plugins_if_node_local(state, pod)
            if scorers is not None:
                host = self._select_indexed(fwk, state, pod, scorers, walked[1], walked[2])
            else:
                scores = self._score(fwk, state, pod, feasible)
                host = self.select_host(scores)
        else:
            scores = self.prioritize_nodes(fwk, state, pod, feasible)
            host = self.select_host(scores)
        return ScheduleResult(host, len(feasible) + len(diagnosis.node_to_status), len(feasible), scores, diagnosis)

    def find_nodes_that_fit_pod(
        self, fwk: Framework, state: CycleState, pod: PodInfo, snapshot: Snapshot
    ) -> tuple[list[NodeInfo], Diagnosis]:
        diagnosis = Diagnosis()
        all_nodes = snapshot.node_info_list
        pre_result, status, rejectors = fwk.run_pre_filter_plugins(state, pod)
        diagnosis.unschedulable_plugins = set(rejectors)
        if status is not None and not status.is_success():
            if not status.is_rejected():
                raise SchedulingError(status)
            # Every node gets the PreFilter status (upstream's absent-nodes status), so that
            # preemption sees it per node.
            for info in all_nodes:
                diagnosis.node_to_status[info.name] = status
            diagnosis.pre_filter_msg = status.message()
            diagnosis.add_plugin_status(status)
            return [], diagnosis

        nominated = pod.pod.status.nominated_node_name
        if nominated:
            nominated_info = snapshot.get(nominated)
            if nominated_info is not None:
                feasible = self._pass_filters(fwk, state, pod, diagnosis, [nominated_info], rotate=False)
                feasible = self._pass_extenders(pod, feasible, diagnosis)
                if feasible:
                    return feasible, diagnosis

        nodes = all_nodes
        if pre_result is not None and not pre_result.all_nodes():
            names = pre_result.node_names or set()
            nodes = [info for info in all_nodes if info.name in names]
            diagnosis.absent_nodes_status = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(rejectors))}]",
            )
        rest = self._indexable(fwk, state, pod) if nodes is all_nodes else None
        if rest is not None:
            feasible = self._walk_index(fwk, state, pod, diagnosis, snapshot, rest)
        else:
            feasible = self._pass_filters(fwk, state, pod, diagnosis, nodes, rotate=True)
        processed = len(feasible) + len(diagnosis.node_to_status)
        self.next_start_node_index = (self.next_start_node_index + processed) % len(all_nodes)
        before = len(feasible)
        feasible = self._pass_extenders(pod, feasible, diagnosis)
        if len(feasible) != before:
            diagnosis.unschedulable_plugins.add(EXTENDER_NAME)
        return feasible, diagnosis

    def _pass_filters(
        self, fwk: Framework, state: CycleState, pod: PodInfo, diagnosis: Diagnosis,
        nodes: Sequence[NodeInfo], *, rotate: bool,
    ) -> list[NodeInfo]:
        """Filter from the round-robin start until enough nodes fit (upstream findNodesThatPassFilters,
        evaluated in order instead of in parallel, so the outcome does not depend on timing)."""
        num_all = len(nodes)
        if num_all == 0:
            return []
        to_find = self._to_find(fwk, num_all)
        start = self.next_start_node_index % num_all if rotate else 0
        feasible: list[NodeInfo] = []
        statuses = diagnosis.node_to_status.writable()
        filter_with_nominated = fwk.node_filter()
        for i in range(num_all):
            info = nodes[(start + i) % num_all]
            status = filter_with_nominated(state, pod, info)
            if status is None or status.code == Code.SUCCESS:
                feasible.append(info)
                if len(feasible) >= to_find:
                    break
            elif status.code == Code.ERROR:
                raise SchedulingError(status)
            else:
                statuses[info.name] = status
                diagnosis.add_plugin_status(status)
        return feasible

    def _to_find(self, fwk: Framework, num_nodes: int) -> int:
        if not self._has_extender_filters() and not self._has_scoring(fwk):
            return 1
        return num_feasible_nodes_to_find(fwk.percentage_of_nodes_to_score, num_nodes)

    # -- the indexed walk: identical pods over unchanged nodes cost array reads --------------------
    def _indexable(self, fwk: Framework, state: CycleState, pod: PodInfo) -> tuple[Any, ...] | None:
        """The filters to run after the index's node-local ones, or None when no index applies."""
        return None if self.extenders else filters_after_index(fwk, state, pod)

    def _walk_index(self, fwk: Framework, state: CycleState, pod: PodInfo, diagnosis: Diagnosis,
                    snapshot: Snapshot, rest: tuple[Any, ...]) -> list[NodeInfo]:
        """`_pass_filters` over every node, read from the pod signature's NodeIndex."""
        index = self._indexes.get(fwk, pod, snapshot)
        num_all = len(index.nodes)
        try:
            walk = index.walk(fwk, state, pod, self.next_start_node_index % num_all, self._to_find(fwk, num_all), rest)
        except WalkError as exc:
            raise SchedulingError(exc.status) from exc
        if len(walk.rejected):
            diagnosis.add_rejections(walk.rejected)
        positions = walk.feasible
        feasible = LazyNodes(len(positions), lambda: index.nodes_at(positions))
        self._walked = (feasible, index, positions)
        return feasible  # type: ignore[return-value]  # LazyNodes: a list to every reader

    def _select_indexed(self, fwk: Framework, state: CycleState, pod: PodInfo, scorers: list[ScorePlugin],
                        index: NodeIndex, positions: Indexes) -> str:
        """`select_host` over totals the index computes for the walked nodes."""
        totals = index.totals(state, pod, scorers, fwk.score_weights, positions)
        if isinstance(totals, Status):
            raise SchedulingError(totals)
        ties = (totals == totals.max()).nonzero()[0]
        pick = ties[0] if len(ties) == 1 else ties[self.rng.randrange(len(ties))]
        return index.names[int(positions[pick])]

    def _has_extender_filters(self) -> bool:
        return any(ext.supports_filter() for ext in self.extenders)

    def _has_scoring(self, fwk: Framework) -> bool:
        return fwk.has_score_plugins() or any(ext.supports_prioritize() for ext in self.extenders)

    def _pass_extenders(self, pod: PodInfo, feasible: list[NodeInfo], diagnosis: Diagnosis) -> list[NodeInfo]:
        for ext in self.extenders:
            if not feasible:
                break
            if not ext.is_interested(pod):
                continue
            try:
                kept, failed, unresolvable = ext.filter(pod, feasible)
            except Exception as exc:  # noqa: BLE001 - extender failures are reported as upstream does
                if ext.is_ignorable():
                    continue
                raise SchedulingError(Status(Code.ERROR, str(exc), error=exc)) from exc
            for name, reason in unresolvable.items():
                diagnosis.node_to_status[name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason, plugin=ext.name)
            for name, reason in failed.items():
                if name not in unresolvable:
                    diagnosis.node_to_status[name] = Status(Code.UNSCHEDULABLE, reason, plugin=ext.name)
            feasible = kept
        return feasible

    def prioritize_nodes(
        self, fwk: Framework, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]
    ) -> list[NodePluginScores]:
        if not self.extenders and not fwk.has_score_plugins():
            return [NodePluginScores(n.name, [], 1) for n in nodes]
        self._pre_score(fwk, state, pod, nodes)
        return self._score(fwk, state, pod, nodes)

    def _pre_score(self, fwk: Framework, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> None:
        s = fwk.run_pre_score_plugins(state, pod, nodes)
        if s is not None and not s.is_success():
            raise SchedulingError(s)

    def _score(self, fwk: Framework, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> list[NodePluginScores]:
        scores, s = fwk.run_score_plugins(state, pod, nodes)
        if s is not None and not s.is_success():
            raise SchedulingError(s)
        if self.extenders:
            by_name = {ns.name: ns for ns in scores}
            for ext in self.extenders:
                if not ext.supports_prioritize() or not ext.is_interested(pod):
                    continue
                try:
                    host_scores, weight = ext.prioritize(pod, nodes)
                except Exception:  # noqa: BLE001 - prioritize errors are ignored, as upstream
                    continue
                for name, score in host_scores.items():
                    entry = by_name.get(name)
                    if entry is not None:
                        weighted = score * weight * (100 // 10)
                        entry.scores.append(PluginScore(ext.name, weighted))
                        entry.total_score += weighted
        return scores

    def select_host(self, scores: list[NodePluginScores]) -> str:
        """The highest total; among equal totals a seeded uniform choice (upstream picks at random)."""
        if not scores:
            raise ValueError("empty priority list")
        best = max(ns.total_score for ns in scores)
        ties = [ns for ns in scores if ns.total_score == best]
        return ties[0].name if len(ties) == 1 else ties[self.rng.randrange(len(ties))].name
