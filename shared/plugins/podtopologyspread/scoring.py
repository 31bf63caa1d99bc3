"""PreScore/Score/NormalizeScore for ScheduleAnyway constraints (upstream podtopologyspread/scoring.go).

A node's raw score is, per constraint whose key it carries, `matching pods in its domain *
log(domains + 2) + (maxSkew - 1)`; fewer matching pods is better, so NormalizeScore reverses the
scale to 0..100. Hostname domains are counted per node in Score instead of in PreScore.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from shared.framework.interfaces import MAX_NODE_SCORE, NodeScore
from shared.framework.node_info import NodeInfo, journal_end
from shared.framework.pod_info import PodInfo

from .common import (
    Constraint,
    RequiredNodeAffinity,
    count_pods_match_selector,
    match_node_inclusion_policies,
    matching_on_node,
    node_labels_match_spread_constraints,
)
from .node_shares import Contributions, NodeShares

INVALID_SCORE = -1


class PreScoreState:
    """Constraints, the filtered nodes left unscored (missing a topology key), the matching-pod
    count per constraint and domain, and each constraint's normalising weight.

    `host_counts` holds, for hostname constraints, each candidate node's own count: upstream
    counts it in Score, counting it alongside the domains in PreScore gives the same numbers
    and counts each node once when constraints share a selector.
    """

    __slots__ = ("constraints", "ignored_nodes", "tp_value_to_pod_counts", "weights", "candidates", "host_counts")

    def __init__(self, constraints: list[Constraint]) -> None:
        self.constraints = constraints
        self.ignored_nodes: set[str] = set()
        self.tp_value_to_pod_counts: list[dict[str, int]] = [{} for _ in constraints]
        self.weights: list[float] = []
        self.candidates: set[str] = set()
        self.host_counts: list[dict[str, int]] = [{} for _ in constraints]

    def clone(self) -> PreScoreState:
        return self  # read-only after PreScore


def topology_normalizing_weight(size: int) -> float:
    """log(size + 2): counts in topologies with few domains are not watered down by big ones."""
    return math.log(size + 2)


def score_for_count(count: int, max_skew: int, weight: float) -> float:
    # maxSkew - 1 dampens differences between domains, the score's tolerance to skew.
    return count * weight + (max_skew - 1)


def go_round(x: float) -> int:
    """math.Round: halves away from zero (Python's round() rounds halves to even)."""
    r = math.floor(abs(x))
    if abs(x) - r >= 0.5:
        r += 1
    return int(r) if x >= 0 else -int(r)


def init_pre_score_state(constraints: list[Constraint], filtered_nodes: Sequence[NodeInfo],
                         require_all_topologies: bool) -> PreScoreState:
    s = PreScoreState(constraints)
    topo_size = [0] * len(constraints)
    for node in filtered_nodes:
        labels = node.labels
        if require_all_topologies and not node_labels_match_spread_constraints(labels, constraints):
            s.ignored_nodes.add(node.name)
            continue
        s.candidates.add(node.name)
        for i, c in enumerate(constraints):
            if c.is_hostname:
                continue
            # A node without the key (system defaulting) opens the "" domain, as upstream.
            value = labels.get(c.topology_key, "")
            counts = s.tp_value_to_pod_counts[i]
            if value not in counts:
                counts[value] = 0
                topo_size[i] += 1
    for i, c in enumerate(constraints):
        size = len(filtered_nodes) - len(s.ignored_nodes) if c.is_hostname else topo_size[i]
        s.weights.append(topology_normalizing_weight(size))
    return s


def count_all_nodes(s: PreScoreState, pod: PodInfo, all_nodes: Sequence[NodeInfo],
                    require_all_topologies: bool, memo: DomainTotals | None = None) -> None:
    """Sum matching pods over every node of the cluster into the domains of the filtered nodes;
    `memo` keeps the sums for pods that count alike, brought up to date from the nodes changed
    since (`DomainTotals`)."""
    required = RequiredNodeAffinity(pod.pod)
    # A clone's changes are not journaled; the lists of clones handed in are clones throughout.
    if memo is not None and not (all_nodes and all_nodes[0].is_clone):
        _count_from_totals(s, pod, all_nodes, require_all_topologies, required, memo)
        return
    namespace = pod.namespace
    constraints = s.constraints
    candidates = s.candidates
    for node in all_nodes:
        labels = node.labels
        if require_all_topologies and not node_labels_match_spread_constraints(labels, constraints):
            continue
        seen: dict[tuple[str, bool], int] = {}
        for i, c in enumerate(constraints):
            if c.is_hostname:
                # Hostname domains are single nodes: only candidates' own counts matter (Score).
                if node.name in candidates and c.topology_key in labels:
                    s.host_counts[i][node.name] = matching_on_node(node, c.selector, namespace, seen)
                continue
            if not match_node_inclusion_policies(c, pod, node, required):
                continue
            counts = s.tp_value_to_pod_counts[i]
            value = labels.get(c.topology_key, "")
            if value not in counts:  # no candidate node in that domain
                continue
            counts[value] += matching_on_node(node, c.selector, namespace, seen)


class DomainTotals(NodeShares):
    """What pods that count alike (same spec, labels, namespace) share between cycles for their
    soft constraints: each node's share of the domain sums, and the sums over one node list. The
    next cycle takes back the old share of each node changed since and adds its new one: counting
    every pod of the cluster for each such pod had been three quarters of a Mixed workload's
    attempt."""

    __slots__ = ("totals",)

    def __init__(self) -> None:
        super().__init__()
        self.totals: list[dict[str, int]] = []

    def fold(self, old: Contributions, new: Contributions) -> bool:
        for i, value, n in old:
            self.totals[i][value] -= n
        for i, value, n in new:
            self.totals[i][value] = self.totals[i].get(value, 0) + n
        return True

    def recount(self, nodes: Sequence[NodeInfo], width: int, make: Callable[[NodeInfo], Contributions]) -> None:
        self.nodes = None  # until the new sums are whole: shares replaced meanwhile no longer add up
        position = journal_end()
        totals: list[dict[str, int]] = [{} for _ in range(width)]
        for node in nodes:
            for i, value, n in self.share(node, make):
                totals[i][value] = totals[i].get(value, 0) + n
        self.settle(nodes, position)
        self.totals = totals


def _count_from_totals(s: PreScoreState, pod: PodInfo, all_nodes: Sequence[NodeInfo], require_all_topologies: bool,
                       required: RequiredNodeAffinity, memo: DomainTotals) -> None:
    """`count_all_nodes` from the memo's sums: the same counts for the candidates' domains, and
    each candidate's own count for hostname constraints."""
    constraints = s.constraints
    namespace = pod.namespace

    def share(node: NodeInfo) -> Contributions:
        labels = node.labels
        if require_all_topologies and not node_labels_match_spread_constraints(labels, constraints):
            return []
        out: Contributions = []
        seen: dict[tuple[str, bool], int] = {}
        for i, c in enumerate(constraints):
            if c.is_hostname or not match_node_inclusion_policies(c, pod, node, required):
                continue
            n = matching_on_node(node, c.selector, namespace, seen)
            if n:
                out.append((i, labels.get(c.topology_key, ""), n))
        return out

    if not memo.catch_up(all_nodes, share):
        memo.recount(all_nodes, len(constraints), share)
    for i, c in enumerate(constraints):
        if c.is_hostname:
            continue
        totals = memo.totals[i]
        counts = s.tp_value_to_pod_counts[i]
        for value in counts:
            counts[value] = totals.get(value, 0)
    hostname = [(i, c) for i, c in enumerate(constraints) if c.is_hostname]
    if not hostname:
        return
    by_name = memo.members
    for name in s.candidates:
        node = by_name.get(name)
        if node is None:
            continue
        labels = node.labels
        for i, c in hostname:
            if c.topology_key in labels:
                s.host_counts[i][name] = count_pods_match_selector(node.pods, c.selector, namespace) if node.pods else 0


def node_score(s: PreScoreState, pod: PodInfo, node: NodeInfo) -> int:
    if node.name in s.ignored_nodes:
        return 0
    labels = node.labels
    score = 0.0
    for i, c in enumerate(s.constraints):
        value = labels.get(c.topology_key)
        if value is None:
            continue
        if c.is_hostname:
            count = s.host_counts[i].get(node.name, -1)
            if count < 0:
                count = count_pods_match_selector(node.pods, c.selector, pod.namespace) if node.pods else 0
        else:
            count = s.tp_value_to_pod_counts[i].get(value, 0)
        score += score_for_count(count, c.max_skew, s.weights[i])
    return go_round(score)


def normalize_scores(s: PreScoreState, scores: list[NodeScore]) -> None:
    """Reverse to 0..100 between the lowest and highest raw score; ignored nodes get 0."""
    min_score = 2**63 - 1
    max_score = 0
    ignored = s.ignored_nodes
    for ns in scores:
        if ns.name in ignored:
            ns.score = INVALID_SCORE
            continue
        if ns.score < min_score:
            min_score = ns.score
        if ns.score > max_score:
            max_score = ns.score
    for ns in scores:
        if ns.score == INVALID_SCORE:
            ns.score = 0
            continue
        if max_score == 0:
            ns.score = MAX_NODE_SCORE
            continue
        # Every operand is non-negative, so floor division equals Go's truncation.
        ns.score = MAX_NODE_SCORE * (max_score + min_score - ns.score) // max_score
