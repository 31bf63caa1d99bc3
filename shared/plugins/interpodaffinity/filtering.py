"""InterPodAffinity PreFilter/Filter state: topology-pair counts computed once per pod.

Three counts, keyed by (topologyKey, value) of the node an existing pod runs on:
- existing anti-affinity: existing pods whose required anti-affinity terms select the incoming pod;
- affinity: existing pods matching *all* the incoming pod's required affinity terms (one per term);
- anti-affinity: existing pods matching each of the incoming pod's required anti-affinity terms.

A term's namespaceSelector is matched against the labels of the cluster's namespaces
(`NamespaceLabels`): the incoming pod's terms against each existing pod's namespace, which is
what upstream's merge of the selector into the term's namespaces amounts to, and existing pods'
anti-affinity terms against the incoming pod's namespace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from shared.framework.namespaces import NamespaceLabels
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import AffinityTerm, PodInfo
from shared.framework.status import Code, Status
from shared.plugins import names

PRE_FILTER_STATE_KEY = "PreFilter" + names.INTER_POD_AFFINITY

ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"

TopologyPair = tuple[str, str]
TopologyCounts = dict[TopologyPair, int]


def _update(counts: TopologyCounts, node_labels: Mapping[str, str], key: str, value: int) -> None:
    tv = node_labels.get(key)
    if tv is None:
        return
    pair = (key, tv)
    n = counts.get(pair, 0) + value
    # value may be negative (RemovePod): drop entries that fall to zero, as upstream.
    if n == 0:
        counts.pop(pair, None)
    else:
        counts[pair] = n


def pod_matches_all_terms(terms: Sequence[AffinityTerm], pod: PodInfo, namespaces: NamespaceLabels) -> bool:
    """True iff there is at least one term and the pod matches every one of them."""
    if not terms:
        return False
    ns_labels = namespaces.of(pod.namespace)
    for t in terms:
        if not t.matches(pod, ns_labels):
            return False
    return True


def update_with_affinity_terms(counts: TopologyCounts, terms: Sequence[AffinityTerm], pod: PodInfo,
                               namespaces: NamespaceLabels, node_labels: Mapping[str, str], value: int) -> None:
    if pod_matches_all_terms(terms, pod, namespaces):
        for t in terms:
            _update(counts, node_labels, t.topology_key, value)


def update_with_anti_affinity_terms(counts: TopologyCounts, terms: Sequence[AffinityTerm], pod: PodInfo,
                                    ns_labels: Mapping[str, str] | None, node_labels: Mapping[str, str],
                                    value: int) -> None:
    for t in terms:
        if t.matches(pod, ns_labels):
            _update(counts, node_labels, t.topology_key, value)


class PreFilterState:
    __slots__ = ("existing_anti_affinity_counts", "affinity_counts", "anti_affinity_counts", "pod_info",
                 "namespaces", "namespace_labels")

    def __init__(self, pod_info: PodInfo, existing_anti_affinity_counts: TopologyCounts,
                 affinity_counts: TopologyCounts, anti_affinity_counts: TopologyCounts,
                 namespaces: NamespaceLabels) -> None:
        self.pod_info = pod_info
        self.namespaces = namespaces
        self.namespace_labels = namespaces.of(pod_info.namespace)
        self.existing_anti_affinity_counts = existing_anti_affinity_counts
        self.affinity_counts = affinity_counts
        self.anti_affinity_counts = anti_affinity_counts

    def clone(self) -> PreFilterState:
        return PreFilterState(self.pod_info, dict(self.existing_anti_affinity_counts), dict(self.affinity_counts),
                              dict(self.anti_affinity_counts), self.namespaces)

    def update_with_pod(self, other: PodInfo, node_labels: Mapping[str, str], multiplier: int) -> None:
        """Account for `other` appearing on (multiplier 1) or leaving (-1) a node with these labels."""
        update_with_anti_affinity_terms(self.existing_anti_affinity_counts, other.required_anti_affinity_terms,
                                        self.pod_info, self.namespace_labels, node_labels, multiplier)
        update_with_affinity_terms(self.affinity_counts, self.pod_info.required_affinity_terms, other,
                                   self.namespaces, node_labels, multiplier)
        update_with_anti_affinity_terms(self.anti_affinity_counts, self.pod_info.required_anti_affinity_terms,
                                        other, self.namespaces.of(other.namespace), node_labels, multiplier)

    def __repr__(self) -> str:
        return (f"PreFilterState(existing={self.existing_anti_affinity_counts}, affinity={self.affinity_counts}, "
                f"anti={self.anti_affinity_counts})")


def existing_anti_affinity_counts(pod: PodInfo, nodes: Iterable[NodeInfo],
                                  namespaces: NamespaceLabels) -> TopologyCounts:
    """Counts from existing pods' required anti-affinity terms that select the incoming pod."""
    ns_labels = namespaces.of(pod.namespace)
    counts: TopologyCounts = {}
    for info in nodes:
        for existing in info.pods_with_required_anti_affinity:
            update_with_anti_affinity_terms(counts, existing.required_anti_affinity_terms, pod, ns_labels,
                                            info.labels, 1)
    return counts


PodMatcher = Callable[[PodInfo], bool]


def term_matcher(term: AffinityTerm, cluster_namespaces: NamespaceLabels) -> PodMatcher:
    """term.matches(pod) specialised once per term: this runs for every pod in the cluster."""
    namespaces = term.namespaces
    selector = term.selector
    if not term.namespace_selector.nothing:
        of = cluster_namespaces.of
        return lambda p: term.matches(p, of(p.namespace))
    if selector.nothing:
        return lambda p: False
    if selector.empty:
        return lambda p: p.namespace in namespaces
    matches = selector.matches
    return lambda p: p.namespace in namespaces and matches(p.labels)


def incoming_affinity_anti_affinity_counts(pod: PodInfo, nodes: Iterable[NodeInfo], namespaces: NamespaceLabels
                                           ) -> tuple[TopologyCounts, TopologyCounts]:
    affinity: TopologyCounts = {}
    anti: TopologyCounts = {}
    count = incoming_counter(pod, namespaces)
    if count is not None:
        for info in nodes:
            count(info, affinity, anti)
    return affinity, anti


IncomingCounter = Callable[[NodeInfo, TopologyCounts, TopologyCounts], None]


def incoming_counter(pod: PodInfo, namespaces: NamespaceLabels) -> IncomingCounter | None:
    """Adds one node's pods matching the incoming pod's required affinity (all terms) and
    anti-affinity terms (each) to the two counts; None when the pod has no such terms."""
    aff_terms = pod.required_affinity_terms
    anti_terms = pod.required_anti_affinity_terms
    if not aff_terms and not anti_terms:
        return None
    aff_matchers = [term_matcher(t, namespaces) for t in aff_terms]
    matches_all: PodMatcher | None = None
    if len(aff_matchers) == 1:
        matches_all = aff_matchers[0]
    elif aff_matchers:
        matches_all = lambda p: all(m(p) for m in aff_matchers)  # noqa: E731
    aff_keys = [t.topology_key for t in aff_terms]
    anti_matchers = [(term_matcher(t, namespaces), t.topology_key) for t in anti_terms]

    def count(info: NodeInfo, affinity: TopologyCounts, anti: TopologyCounts) -> None:
        labels = info.labels
        for existing in info.pods:
            if matches_all is not None and matches_all(existing):
                for key in aff_keys:
                    _update(affinity, labels, key, 1)
            for m, key in anti_matchers:
                if m(existing):
                    _update(anti, labels, key, 1)

    return count


def satisfy_existing_pods_anti_affinity(state: PreFilterState, node_labels: Mapping[str, str]) -> bool:
    counts = state.existing_anti_affinity_counts
    if not counts:
        return True
    # Any of the node's (key, value) pairs holding a count > 0 rejects it; walk the smaller side.
    if len(counts) < len(node_labels):
        for (key, value), n in counts.items():
            if n > 0 and node_labels.get(key) == value:
                return False
        return True
    for pair in node_labels.items():
        if counts.get(pair, 0) > 0:
            return False
    return True


def satisfy_pod_anti_affinity(state: PreFilterState, node_labels: Mapping[str, str]) -> bool:
    counts = state.anti_affinity_counts
    if counts:
        for term in state.pod_info.required_anti_affinity_terms:
            tv = node_labels.get(term.topology_key)
            if tv is not None and counts.get((term.topology_key, tv), 0) > 0:
                return False
    return True


def satisfy_pod_affinity(state: PreFilterState, node_labels: Mapping[str, str]) -> bool:
    pods_exist = True
    counts = state.affinity_counts
    for term in state.pod_info.required_affinity_terms:
        tv = node_labels.get(term.topology_key)
        if tv is None:
            # Every topology key must exist on the node.
            return False
        if counts.get((term.topology_key, tv), 0) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    # The first pod of a group with affinity to itself: when no pod anywhere matches the terms,
    # let it in if it matches its own terms, so such groups do not stay pending forever.
    pi = state.pod_info
    return not counts and pod_matches_all_terms(pi.required_affinity_terms, pi, state.namespaces)


def filter_node(state: PreFilterState, node_info: NodeInfo) -> Status | None:
    labels = node_info.labels
    if not satisfy_pod_affinity(state, labels):
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
    if not satisfy_pod_anti_affinity(state, labels):
        return Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
    if not satisfy_existing_pods_anti_affinity(state, labels):
        return Status(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
    return None
