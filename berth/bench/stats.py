"""Percentiles and throughput series for benchmark reports."""

from __future__ import annotations

import math
from collections.abc import Sequence


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100), nearest-rank, as load-test tools report it."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def throughput_series(done_at: Sequence[float], bucket: float) -> list[tuple[float, float]]:
    """(bucket end time, completions per second in that bucket) from completion times since start."""
    if not done_at:
        return []
    buckets = [0] * (int(max(done_at) / bucket) + 1)
    for t in done_at:
        buckets[int(t / bucket)] += 1
    return [((i + 1) * bucket, n / bucket) for i, n in enumerate(buckets)]
