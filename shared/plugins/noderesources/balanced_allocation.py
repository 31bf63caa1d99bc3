"""NodeResourcesBalancedAllocation: favors nodes whose resource usage fractions stay close to each
other once the pod is placed (score = (1 - std) * MaxNodeScore)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import MAX_NODE_SCORE, Handle, PreScorePlugin, ScorePlugin
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.status import SKIP, Status
from shared.plugins import names

from .args import DEFAULT_RESOURCES, ResourceSpec, parse_balanced_allocation_args
from .resource_allocation import PodRequests, ResourceAllocationScorer

PRE_SCORE_STATE_KEY = "PreScore" + names.NODE_RESOURCES_BALANCED_ALLOCATION


def balanced_resource_scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    if len(allocatable) == 2 and allocatable[0] and allocatable[1]:
        # The default cpu/memory pair, same float operations as the general path below.
        f0 = requested[0] / allocatable[0]
        f1 = requested[1] / allocatable[1]
        return int((1 - abs(((f0 if f0 <= 1 else 1.0) - (f1 if f1 <= 1 else 1.0)) / 2)) * float(MAX_NODE_SCORE))
    fractions: list[float] = []
    total = 0.0
    for req, alloc in zip(requested, allocatable):
        if alloc == 0:
            continue
        fraction = req / alloc
        if fraction > 1:
            fraction = 1.0
        total += fraction
        fractions.append(fraction)
    std = 0.0
    # With two resources the standard deviation is half their difference.
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        acc = 0.0
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        std = math.sqrt(acc / len(fractions))
    return int((1 - std) * float(MAX_NODE_SCORE))


class BalancedAllocation(PreScorePlugin, ScorePlugin):
    NAME = names.NODE_RESOURCES_BALANCED_ALLOCATION
    NODE_LOCAL = True

    def __init__(self, resources: Sequence[ResourceSpec] = DEFAULT_RESOURCES, handle: Handle | None = None) -> None:
        # Plain requests, not the non-zero defaults: a request-less pod changes no fraction.
        self.scorer = ResourceAllocationScorer(resources, True, balanced_resource_scorer)
        self.handle = handle

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> BalancedAllocation:
        return cls(parse_balanced_allocation_args(args), handle)

    def pre_score_reads_nodes(self, pod: PodInfo) -> bool:
        return False

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        requests = self.scorer.pod_requests(pod)
        if requests.is_best_effort():
            # Scoring best-effort pods would pile them onto the same node.
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, requests)
        return None

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        requests = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(requests, PodRequests):
            requests = self.scorer.pod_requests(pod)
            if requests.is_best_effort():
                return 0, None
        return self.scorer.score(node_info, requests.values)
