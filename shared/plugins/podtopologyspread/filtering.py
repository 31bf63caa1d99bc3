"""PreFilter/Filter for DoNotSchedule constraints (upstream podtopologyspread/filtering.go).

PreFilter counts, per constraint, the pods its selector matches in each topology domain over the
nodes that carry every topology key and pass the constraint's node inclusion policies; Filter
then checks `matching pods in the node's domain + self-match - global minimum <= maxSkew`.
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.framework.node_info import NodeInfo, journal_end
from shared.framework.pod_info import PodInfo

from .common import (
    Constraint,
    RequiredNodeAffinity,
    match_node_inclusion_policies,
    matching_on_node,
    node_labels_match_spread_constraints,
)
from .node_shares import Contributions, NodeShares

MAX_INT32 = 2**31 - 1


class CriticalPaths:
    """The two domains with the fewest matching pods: `num0` is always the minimum, `num1` is no
    smaller but not necessarily the second minimum. Two suffice because preemption only removes
    pods from one node per copy of the state."""

    __slots__ = ("value0", "num0", "value1", "num1")

    def __init__(self) -> None:
        self.value0 = ""
        self.num0 = MAX_INT32
        self.value1 = ""
        self.num1 = MAX_INT32

    def update(self, value: str, num: int) -> None:
        if value == self.value0:
            self.num0 = num
        elif value == self.value1:
            self.num1 = num
        else:
            if num < self.num0:
                self.value1, self.num1 = self.value0, self.num0
                self.value0, self.num0 = value, num
            elif num < self.num1:
                self.value1, self.num1 = value, num
            return
        if self.num0 > self.num1:
            self.value0, self.num0, self.value1, self.num1 = self.value1, self.num1, self.value0, self.num0

    def clone(self) -> CriticalPaths:
        copy = CriticalPaths.__new__(CriticalPaths)
        copy.value0, copy.num0, copy.value1, copy.num1 = self.value0, self.num0, self.value1, self.num1
        return copy

    def as_tuple(self) -> tuple[tuple[str, int], tuple[str, int]]:
        return (self.value0, self.num0), (self.value1, self.num1)

    def __repr__(self) -> str:
        return f"CriticalPaths({self.as_tuple()})"


class PreFilterState:
    """Per constraint (by index): domain value -> matching pods, and its critical paths.

    `self_match` records, per constraint, whether the incoming pod matches its own selector.
    """

    __slots__ = ("constraints", "critical_paths", "tp_value_to_match_num", "self_match", "required", "verdicts")

    def __init__(self, constraints: list[Constraint], required: RequiredNodeAffinity | None = None,
                 self_match: list[int] | None = None) -> None:
        self.constraints = constraints
        self.critical_paths: list[CriticalPaths] = [CriticalPaths() for _ in constraints]
        self.tp_value_to_match_num: list[dict[str, int]] = [{} for _ in constraints]
        self.self_match: list[int] = self_match if self_match is not None else [0] * len(constraints)
        self.required = required
        self.verdicts: dict[object, object] = {}
        """Filter's verdict by the node's topology values (all a verdict depends on, given these
        counts); emptied whenever the counts change."""

    def min_match_num(self, i: int) -> int:
        """The global minimum, taken as 0 while there are fewer eligible domains than minDomains."""
        if len(self.tp_value_to_match_num[i]) < self.constraints[i].min_domains:
            return 0
        return self.critical_paths[i].num0

    def clone(self) -> PreFilterState:
        copy = PreFilterState.__new__(PreFilterState)
        copy.constraints = self.constraints  # never mutated
        copy.self_match = self.self_match
        copy.required = self.required
        copy.critical_paths = [p.clone() for p in self.critical_paths]
        copy.tp_value_to_match_num = [dict(m) for m in self.tp_value_to_match_num]
        copy.verdicts = {}
        return copy


class NodeCounts(NodeShares):
    """What pods that count alike (same spec, labels, namespace) share between cycles for their
    hard constraints: each node's share of the counts, and the counts over one node list. The next
    cycle folds in only the nodes changed since."""

    __slots__ = ("counts",)

    def __init__(self) -> None:
        super().__init__()
        self.counts: list[dict[str, int]] = []

    def fold(self, old: Contributions, new: Contributions) -> bool:
        # A node whose domains changed refuses: the order of the domains then follows a full count.
        if len(new) != len(old) or any(a[:2] != b[:2] for a, b in zip(new, old)):
            return False
        for (i, value, n_new), (_, _, n_old) in zip(new, old):
            self.counts[i][value] += n_new - n_old
        return True


def cal_pre_filter_state(pod: PodInfo, constraints: list[Constraint], nodes: Sequence[NodeInfo],
                         memo: NodeCounts | None = None) -> PreFilterState:
    """Count matching pods per topology value over every node that passes the inclusion policies.

    `memo` keeps each node's contribution and their sum for pods that count alike; only nodes
    changed since are counted again. The domains keep the order a full count gives them (the
    critical paths are taken in that order)."""
    required = RequiredNodeAffinity(pod.pod)
    self_match = [1 if c.selector.matches(pod.labels) else 0 for c in constraints]
    s = PreFilterState(constraints, required, self_match)

    def make(node: NodeInfo) -> Contributions:
        return _node_contributions(pod, constraints, node, required)

    if memo is not None and memo.catch_up(nodes, make):
        s.tp_value_to_match_num = [dict(c) for c in memo.counts]
    else:
        position = journal_end()
        counts = s.tp_value_to_match_num
        for node in nodes:
            for i, value, n in (memo.share(node, make) if memo is not None else make(node)):
                tp_counts = counts[i]
                tp_counts[value] = tp_counts.get(value, 0) + n
        if memo is not None:
            memo.settle(nodes, position)
            memo.counts = [dict(c) for c in counts]
    for i, tp_counts in enumerate(s.tp_value_to_match_num):
        paths = s.critical_paths[i]
        for value, num in tp_counts.items():
            paths.update(value, num)
    return s


def _node_contributions(pod: PodInfo, constraints: list[Constraint], node: NodeInfo,
                        required: RequiredNodeAffinity) -> list[tuple[int, str, int]]:
    labels = node.labels
    if not node_labels_match_spread_constraints(labels, constraints):
        return []
    out: list[tuple[int, str, int]] = []
    seen: dict[tuple[str, bool], int] = {}
    for i, c in enumerate(constraints):
        if not match_node_inclusion_policies(c, pod, node, required):
            continue
        out.append((i, labels[c.topology_key], matching_on_node(node, c.selector, pod.namespace, seen)))
    return out


def update_with_pod(s: PreFilterState, updated: PodInfo, preemptor: PodInfo, node: NodeInfo, delta: int) -> None:
    """Adjust the counts for a pod added to (delta 1) or removed from (delta -1) `node`."""
    if updated.namespace != preemptor.namespace:
        return
    if not node_labels_match_spread_constraints(node.labels, s.constraints):
        return
    required = s.required if s.required is not None else RequiredNodeAffinity(preemptor.pod)
    changed = False
    for i, c in enumerate(s.constraints):
        if not c.selector.matches(updated.labels):
            continue
        if not match_node_inclusion_policies(c, preemptor, node, required):
            continue
        value = node.labels[c.topology_key]
        tp_counts = s.tp_value_to_match_num[i]
        tp_counts[value] = tp_counts.get(value, 0) + delta
        s.critical_paths[i].update(value, tp_counts[value])
        changed = True
    if changed:
        s.verdicts.clear()
