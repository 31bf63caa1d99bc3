"""InterPodAffinity PreScore/Score/NormalizeScore: weights summed per topology pair, then min-max
normalised to 0..100 (upstream scoring.go)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from shared.framework.interfaces import MAX_NODE_SCORE, NodeScore
from shared.framework.namespaces import NamespaceLabels
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import AffinityTerm, PodInfo, WeightedAffinityTerm
from shared.plugins import names

from .filtering import PodMatcher, term_matcher

PRE_SCORE_STATE_KEY = "PreScore" + names.INTER_POD_AFFINITY

# topologyKey -> topology value -> summed weight
ScoreMap = dict[str, dict[str, int]]


class PreScoreState:
    __slots__ = ("topology_score", "pod_info")

    def __init__(self, pod_info: PodInfo, topology_score: ScoreMap) -> None:
        self.pod_info = pod_info
        self.topology_score = topology_score

    def clone(self) -> PreScoreState:
        return self  # read-only after PreScore

    def __repr__(self) -> str:
        return f"PreScoreState({self.topology_score})"


def _process_term(m: ScoreMap, term: AffinityTerm, weight: int, pod: PodInfo, ns_labels: Mapping[str, str] | None,
                  node_labels: Mapping[str, str], multiplier: int) -> None:
    if term.matches(pod, ns_labels):
        tv = node_labels.get(term.topology_key)
        if tv is not None:
            values = m.get(term.topology_key)
            if values is None:
                values = m[term.topology_key] = {}
            values[tv] = values.get(tv, 0) + weight * multiplier


def _process_terms(m: ScoreMap, terms: Sequence[WeightedAffinityTerm], pod: PodInfo,
                   ns_labels: Mapping[str, str] | None, node_labels: Mapping[str, str], multiplier: int) -> None:
    for wt in terms:
        _process_term(m, wt.term, wt.weight, pod, ns_labels, node_labels, multiplier)


def process_existing_pod(m: ScoreMap, incoming: PodInfo, ns_labels: Mapping[str, str], existing: PodInfo,
                         node_labels: Mapping[str, str], hard_pod_affinity_weight: int) -> None:
    """The existing pod's terms matched against the incoming pod (the incoming pod's own terms are
    handled by topology_scores)."""
    if not node_labels or not existing.has_affinity:
        return
    # Required affinity of the existing pod counts as a preference of weight hardPodAffinityWeight.
    if hard_pod_affinity_weight > 0:
        for term in existing.required_affinity_terms:
            _process_term(m, term, hard_pod_affinity_weight, incoming, ns_labels, node_labels, 1)
    _process_terms(m, existing.preferred_affinity_terms, incoming, ns_labels, node_labels, 1)
    _process_terms(m, existing.preferred_anti_affinity_terms, incoming, ns_labels, node_labels, -1)


def _incoming_terms(incoming: PodInfo, namespaces: NamespaceLabels) -> list[tuple[PodMatcher, str, int]]:
    """The incoming pod's preferred terms as (matcher, topology key, signed weight)."""
    return [(term_matcher(wt.term, namespaces), wt.term.topology_key, wt.weight)
            for wt in incoming.preferred_affinity_terms] + [
        (term_matcher(wt.term, namespaces), wt.term.topology_key, -wt.weight)
        for wt in incoming.preferred_anti_affinity_terms]


def topology_scores(incoming: PodInfo, nodes: Iterable[NodeInfo], all_pods: bool,
                    hard_pod_affinity_weight: int, namespaces: NamespaceLabels) -> ScoreMap | None:
    """The summed weights, or None when no existing pod contributed (PreScore then skips).

    ignorePreferredTermsOfExistingPods only makes PreScore skip pods without preferred terms of
    their own, as upstream; otherwise existing pods' terms always count.
    """
    share = node_share(incoming, all_pods, hard_pod_affinity_weight, namespaces)
    total: ScoreMap = {}
    contributed = False
    for info in nodes:
        node_map = share(info)
        if node_map:
            contributed = True
            add_scores(total, node_map, 1)
    return total if contributed else None


def node_share(incoming: PodInfo, all_pods: bool, hard_pod_affinity_weight: int,
               namespaces: NamespaceLabels) -> Callable[[NodeInfo], ScoreMap]:
    """What one node's pods add to the incoming pod's topology scores (empty: nothing)."""
    ns_labels = namespaces.of(incoming.namespace)
    own = _incoming_terms(incoming, namespaces)

    def share(info: NodeInfo) -> ScoreMap:
        pods = info.pods if all_pods else info.pods_with_affinity
        labels = info.labels
        node_map: ScoreMap = {}
        if not pods or not labels:
            return node_map
        for existing in pods:
            for matches, key, weight in own:
                if matches(existing):
                    tv = labels.get(key)
                    if tv is not None:
                        values = node_map.setdefault(key, {})
                        values[tv] = values.get(tv, 0) + weight
            if existing.has_affinity:
                process_existing_pod(node_map, incoming, ns_labels, existing, labels, hard_pod_affinity_weight)
        return node_map

    return share


def add_scores(total: ScoreMap, node_map: ScoreMap, sign: int) -> None:
    """`total` plus (sign 1) or minus (-1) one node's share; a value summing to 0 stays (it scores
    nothing either way)."""
    for key, values in node_map.items():
        target = total.setdefault(key, {})
        for v, w in values.items():
            target[v] = target.get(v, 0) + sign * w


def score_node(state: PreScoreState, node_labels: Mapping[str, str]) -> int:
    score = 0
    for key, values in state.topology_score.items():
        tv = node_labels.get(key)
        if tv is not None:
            score += values.get(tv, 0)
    return score


def normalize(state: PreScoreState, scores: list[NodeScore]) -> None:
    if not state.topology_score or not scores:
        return
    max_count = max(s.score for s in scores)
    min_count = min(s.score for s in scores)
    diff = max_count - min_count
    for s in scores:
        f = 0.0
        if diff > 0:
            # Same float expression as upstream so truncation lands on the same integer.
            f = float(MAX_NODE_SCORE) * (float(s.score - min_count) / float(diff))
        s.score = int(f)
