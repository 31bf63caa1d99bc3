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
