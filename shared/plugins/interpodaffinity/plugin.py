"""InterPodAffinity: required pod affinity/anti-affinity (PreFilter/Filter, with AddPod/RemovePod for
nominated pods and preemption) and preferred terms (PreScore/Score/NormalizeScore), as upstream."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from shared.framework import events
from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import (
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    NodeScore,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.status import Code, Status
from shared.plugins import names

from .counts_memo import CountsMemo, ScoresMemo
from .filtering import (
    PRE_FILTER_STATE_KEY,
    PreFilterState,
    existing_anti_affinity_counts,
    filter_node,
    incoming_affinity_anti_affinity_counts,
)
from .scoring import PRE_SCORE_STATE_KEY, PreScoreState, normalize, score_node, topology_scores

DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1
MIN_HARD_POD_AFFINITY_WEIGHT = 0
MAX_HARD_POD_AFFINITY_WEIGHT = 100


class InterPodAffinityArgs:
    __slots__ = ("hard_pod_affinity_weight", "ignore_preferred_terms_of_existing_pods")

    def __init__(self, hard_pod_affinity_weight: int = DEFAULT_HARD_POD_AFFINITY_WEIGHT,
                 ignore_preferred_terms_of_existing_pods: bool = False) -> None:
        self.hard_pod_affinity_weight = hard_pod_affinity_weight
        self.ignore_preferred_terms_of_existing_pods = ignore_preferred_terms_of_existing_pods

    @classmethod
    def from_config(cls, args: Mapping[str, Any] | None) -> InterPodAffinityArgs:
        """Defaulting and validation of the camelCase pluginConfig args (ValueError when invalid)."""
        args = args or {}
        weight = args.get("hardPodAffinityWeight")
        if weight is None:
            weight = DEFAULT_HARD_POD_AFFINITY_WEIGHT
        if isinstance(weight, bool) or not isinstance(weight, int):
            raise ValueError(f"hardPodAffinityWeight: Invalid value: {weight!r}: must be an integer")
        if not MIN_HARD_POD_AFFINITY_WEIGHT <= weight <= MAX_HARD_POD_AFFINITY_WEIGHT:
            raise ValueError(f"hardPodAffinityWeight: Invalid value: {weight}: not in valid range "
                             f"[{MIN_HARD_POD_AFFINITY_WEIGHT}, {MAX_HARD_POD_AFFINITY_WEIGHT}]")
        ignore = bool(args.get("ignorePreferredTermsOfExistingPods") or False)
        return cls(weight, ignore)


def _not_found(key: str, verb: str) -> Status:
    return Status(Code.ERROR, f'{verb} "{key}" from cycleState: not found')


class _Extensions(PreFilterExtensions):
    __slots__ = ()

    def add_pod(self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return _not_found(PRE_FILTER_STATE_KEY, "error reading")
        s.update_with_pod(pod_to_add, node_info.labels, 1)
        return None

    def remove_pod(self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo,
                   node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return _not_found(PRE_FILTER_STATE_KEY, "error reading")
        s.update_with_pod(pod_to_remove, node_info.labels, -1)
        return None


_EXTENSIONS = _Extensions()


class InterPodAffinity(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, ScoreExtensions,
                       EnqueueExtensions):
    NAME = names.INTER_POD_AFFINITY

    __slots__ = ("args", "handle", "_counts", "_scores")

    def __init__(self, args: InterPodAffinityArgs, handle: Handle) -> None:
        self.args = args
        self._counts = CountsMemo()
        self._scores = ScoresMemo()
        self.handle = handle

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> InterPodAffinity:
        return cls(InterPodAffinityArgs.from_config(args), handle)

    def events_to_register(self) -> list[events.ClusterEvent]:
        # As upstream with queueing hints (the default): assigned pods appearing, changing labels
        # or leaving may satisfy affinity or lift anti-affinity; a node gaining a topology label
        # may join a matching domain.
        A = events.ActionType
        return [
            events.ClusterEvent(events.POD, A.ADD | A.UPDATE_POD_LABEL | A.DELETE),
            events.ClusterEvent(events.NODE, A.ADD | A.UPDATE_NODE_LABEL),
        ]

    # -- PreFilter / Filter -----------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodInfo,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        snapshot = self.handle.snapshot()
        if (not pod.required_affinity_terms and not pod.required_anti_affinity_terms and snapshot is not None
                and nodes is snapshot.node_info_list and snapshot.surely_without_affinity()):
            return None, Status(Code.SKIP)  # no terms of its own, and no pod's anti-affinity to respect
        kept = self._counts.counts(pod, snapshot, nodes)
        if kept is not None:
            existing, affinity, anti = kept
        else:
            existing = existing_anti_affinity_counts(pod, snapshot.have_pods_with_required_anti_affinity_list(),
                                                     snapshot.namespaces)
            affinity, anti = incoming_affinity_anti_affinity_counts(pod, nodes, snapshot.namespaces)
        if not existing and not pod.required_affinity_terms and not pod.required_anti_affinity_terms:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(pod, existing, affinity, anti, snapshot.namespaces))
        return None, None

    def checks_nothing_for(self, pod: PodInfo) -> bool:
        # As PreFilter's skip: no required terms of its own, and no pod's anti-affinity anywhere.
        if pod.required_affinity_terms or pod.required_anti_affinity_terms:
            return False
        snapshot = self.handle.snapshot()
        return snapshot is not None and snapshot.surely_without_affinity()

    def pre_filter_extensions(self) -> PreFilterExtensions:
        return _EXTENSIONS

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return _not_found(PRE_FILTER_STATE_KEY, "error reading")
        return filter_node(s, node_info)

    # -- PreScore / Score -------------------------------------------------------------------
    def pre_score_reads_nodes(self, pod: PodInfo) -> bool:
        return False

    def scores_nothing_for(self, pod: PodInfo) -> bool:
        # As PreScore's skips: no preferred terms of its own, and none of other pods to score by.
        if pod.preferred_affinity_terms or pod.preferred_anti_affinity_terms:
            return False
        if self.args.ignore_preferred_terms_of_existing_pods:
            return True
        snapshot = self.handle.snapshot()
        return snapshot is not None and snapshot.surely_without_affinity()

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        has_preferred = bool(pod.preferred_affinity_terms or pod.preferred_anti_affinity_terms)
        if self.args.ignore_preferred_terms_of_existing_pods and not has_preferred:
            return Status(Code.SKIP)
        snapshot = self.handle.snapshot()
        if not has_preferred and snapshot is not None and snapshot.surely_without_affinity():
            return Status(Code.SKIP)  # no preferred terms of its own, and no pod's terms to score by
        weight = self.args.hard_pod_affinity_weight
        kept = self._scores.scores(pod, snapshot, has_preferred, weight)
        if kept is not None:
            (scores,) = kept
        else:
            # Without preferred terms of its own, only pods with affinity can contribute.
            all_nodes = snapshot.node_info_list if has_preferred else snapshot.have_pods_with_affinity_list()
            scores = topology_scores(pod, all_nodes, has_preferred, weight, snapshot.namespaces)
        if scores is None:
            return Status(Code.SKIP)
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(pod, scores))
        return None

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return 0, _not_found(PRE_SCORE_STATE_KEY, "failed to read")
        return score_node(s, node_info.labels), None

    def score_extensions(self) -> ScoreExtensions:
        return self

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return _not_found(PRE_SCORE_STATE_KEY, "failed to read")
        normalize(s, scores)
        return None

