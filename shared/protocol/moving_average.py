"""The exponential moving average the pipelined queue estimates its batches by (nodes a pod walks,
a batch's round trip, the time to decide one)."""

from __future__ import annotations


def moving_average(average: float, sample: float, weight: float) -> float:
    """`average` moved towards `sample` by `weight` (the latest sample's share); the first sample
    (an average of 0: none yet) is taken as it is."""
    return sample if not average else (1 - weight) * average + weight * sample
