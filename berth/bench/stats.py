"""Percentiles and throughput series for benchmark reports."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100), nearest-rank, as load-test tools report it."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def spread_summary(per_node: Sequence[int]) -> dict[str, float]:
    """How evenly pods lie on the nodes: the fewest, the median, the 99th percentile and the most
    pods a node holds (every node counted, empty ones too)."""
    if not per_node:
        return {}
    return {"min": min(per_node), "median": percentile(per_node, 50), "p99": percentile(per_node, 99),
            "max": max(per_node)}


def paired_steps(before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]]) -> list[float]:
    """Round by round, one count's pods/s against the count before it in the same round: the two
    ran one after the other, so a machine that slows for a while slows both, where the ratio of two
    medians taken from different rounds carries that drift."""
    return [a["pods_per_second"] / b["pods_per_second"] for b, a in zip(before, after) if b["pods_per_second"]]


def median(values: Sequence[float]) -> float | None:
    """The middle value (the mean of the middle two for an even count); None for none."""
    if not values:
        return None
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


NEVER_SLOWER = 0.95
"""The least pods/s a worker count should give against the count before it."""

MEDIAN_CONFIDENCE = 0.9
"""The least confidence `median_interval` gives its interval where the values allow it."""


def median_interval(values: Sequence[float],
                    confidence: float = MEDIAN_CONFIDENCE) -> tuple[float, float, float] | None:
    """Where the median of what `values` sample lies, from their order statistics alone (no
    assumption about their distribution): the narrowest interval from the k-th smallest to the k-th
    largest that holds it with at least `confidence`, or the widest one (smallest to largest) where
    too few values give that much. (low, high, its confidence); None for none. The chance that
    the k-th smallest of n lies above the median is that of fewer than k of n fair coins falling
    heads: three values give (min, max) with 75%, five 94%, eight the second smallest to the
    second largest with 93%."""
    if not values:
        return None
    ordered, n = sorted(values), len(values)
    below = 0  # ways for the k-th smallest to lie above the median (of 2**n), k counted up
    best = (ordered[0], ordered[-1], 1 - 2 / 2 ** n)
    for k in range(1, (n + 1) // 2 + 1):
        below += math.comb(n, k - 1)
        covered = 1 - 2 * below / 2 ** n  # whole numbers until here: no float underflows for many values
        if covered < confidence:
            break
        best = (ordered[k - 1], ordered[n - k], covered)
    return best


def paired_interval(steps: Sequence[float]) -> dict[str, float] | None:
    """Where the median of a step's paired ratios lies (`median_interval`: low, high, confidence);
    None for fewer than two, which say nothing of it."""
    interval = median_interval(steps) if len(steps) > 1 else None
    return None if interval is None else dict(zip(("low", "high", "confidence"), interval, strict=True))


def throughput_series(done_at: Sequence[float], bucket: float) -> list[tuple[float, float]]:
    """(bucket end time, completions per second in that bucket) from completion times since start."""
    if not done_at:
        return []
    buckets = [0] * (int(max(done_at) / bucket) + 1)
    for t in done_at:
        buckets[int(t / bucket)] += 1
    return [((i + 1) * bucket, n / bucket) for i, n in enumerate(buckets)]


def median_run(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Of one worker count's runs (in the order they ran), the run of median pods/s (the lower of
    the middle two for an even number), whole: its CPU and latencies are that run's, not medians
    of other runs. With every run's pods/s and total CPU per pod, in run order."""
    ranked = sorted(runs, key=lambda r: r["pods_per_second"])
    return {**ranked[(len(ranked) - 1) // 2],
            "rounds_pods_per_second": [r["pods_per_second"] for r in runs],
            "rounds_cpu_ms_per_pod": [r["cpu_ms_per_pod"].get("total", 0.0) for r in runs]}
