"""Scoring strategies of NodeResourcesFit, with upstream's int64 arithmetic.

Each scorer takes parallel lists (requested, allocatable) in the order of the configured
resources; an allocatable of 0 means "not scored on this node" and is skipped.
Go's integer division truncates toward zero, and math.Round rounds half away from zero:
both differ from Python's `//` and `round` and are spelled out here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from shared.framework.interfaces import MAX_NODE_SCORE

from .args import (
    LEAST_ALLOCATED,
    MAX_CUSTOM_PRIORITY_SCORE,
    MAX_UTILIZATION,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    ResourceSpec,
    ShapePoint,
)

Scorer = Callable[[Sequence[int], Sequence[int]], int]


def go_div(a: int, b: int) -> int:
    """int64 division truncating toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def go_round(x: float) -> int:
    """math.Round: half away from zero."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def least_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return ((capacity - requested) * MAX_NODE_SCORE) // capacity


def least_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """Favors nodes with fewer requested resources: Σ((capacity-requested)*100/capacity * w) / Σw."""
    weights = tuple(r.weight for r in resources)

    def scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for req, alloc, w in zip(requested, allocatable, weights):
            if alloc == 0:
                continue
            if req <= alloc:  # least_requested_score, inlined for the per-node loop
                node_score += ((alloc - req) * MAX_NODE_SCORE) // alloc * w
            weight_sum += w
        return node_score // weight_sum if weight_sum else 0

    return scorer


def most_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """Favors nodes with more requested resources: Σ(requested*100/capacity * w) / Σw."""
    weights = tuple(r.weight for r in resources)

    def scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for req, alloc, w in zip(requested, allocatable, weights):
            if alloc == 0:
                continue
            node_score += ((req if req < alloc else alloc) * MAX_NODE_SCORE) // alloc * w
            weight_sum += w
        return node_score // weight_sum if weight_sum else 0

    return scorer


def broken_linear_function(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """helper.BuildBrokenLinearFunction: flat before the first and after the last point, linear between."""
    points = tuple(shape)

    def f(p: int) -> int:
        for i, (utilization, score) in enumerate(points):
            if p <= utilization:
                if i == 0:
                    return score
                u0, s0 = points[i - 1]
                return s0 + go_div((score - s0) * (p - u0), utilization - u0)
        return points[-1][1]

    return f


def requested_to_capacity_ratio_scorer(resources: Sequence[ResourceSpec], shape: Sequence[ShapePoint]) -> Scorer:
    # Shape scores are on a 0-10 scale; the scheduler scores on 0-MaxNodeScore.
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    raw = broken_linear_function([(p.utilization, p.score * scale) for p in shape])
    weights = [r.weight for r in resources]

    def scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for i, alloc in enumerate(allocatable):
            if alloc == 0:
                continue
            req = requested[i]
            score = raw(MAX_UTILIZATION) if req > alloc else raw(req * MAX_UTILIZATION // alloc)
            # A resource scoring 0 does not count towards the weights either.
            if score > 0:
                node_score += score * weights[i]
                weight_sum += weights[i]
        if weight_sum == 0:
            return 0
        return go_round(node_score / weight_sum)

    return scorer


def build_scorer(strategy: str, resources: Sequence[ResourceSpec], shape: Sequence[ShapePoint]) -> Scorer:
    if strategy == LEAST_ALLOCATED:
        return least_resource_scorer(resources)
    if strategy == MOST_ALLOCATED:
        return most_resource_scorer(resources)
    if strategy == REQUESTED_TO_CAPACITY_RATIO:
        return requested_to_capacity_ratio_scorer(resources, shape)
    raise ValueError(f"scoring strategy {strategy} is not supported")
