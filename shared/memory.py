"""Garbage-collector settings for long-running, allocation-heavy work (scheduling, replay).

A scheduling attempt allocates thousands of short-lived objects (statuses, scores) while the
cluster view and the event history hold millions of long-lived ones. With CPython's default
thresholds, gen-0 collections run every 700 allocations and full collections keep re-walking
that long-lived heap: measured on a 5,000-node replay, about half the time went to the
collector. The objects are rarely cyclic, so collecting less often costs little memory.

A state that keeps growing after the settle (the queue's view as pods arrive) needs no settling
again: with these thresholds a full collection comes after about a hundred million allocations,
and only once the objects kept since the last one are a quarter of those it kept (CPython's rule),
so the growing state is walked a few times in all, not at every collection.
"""

from __future__ import annotations

import gc

THRESHOLDS = (50_000, 20, 100)


def settle_heap() -> None:
    """Collect once, then move every object alive now out of the collector's sight (they are
    the long-lived state) and raise the thresholds. Call again after loading a large state."""
    gc.unfreeze()  # what an earlier call froze and has since died is collected too
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
