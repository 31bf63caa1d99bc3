"""The order a batch of events is stored in: each partition's events in offset order, the
partitions merged by the events' times.

A fetch hands over records grouped by partition, so a pod's placement could be stored before its
submission when both arrive in one batch, and a watch (which follows the store's order) would then
show the pod Bound before it was ever Pending. The log orders each partition only; the times its
producers stamped order the partitions among themselves, as far as their clocks agree. Only
within a batch: a fetch may stop short of a partition, so an event can still be stored after a later
one of another partition that came in an earlier batch.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from shared.events import ReceivedEvent


def in_time_order(batch: Sequence[ReceivedEvent]) -> list[ReceivedEvent]:
    runs: dict[tuple[str, int], list[ReceivedEvent]] = {}
    for event in batch:
        runs.setdefault((event.position.topic, event.position.partition), []).append(event)
    if len(runs) < 2:
        return list(batch)
    # heapq.merge takes the earliest head and keeps each run's own order (a run's times need not
    # grow: several producers write one partition), ties going to the run listed first.
    return list(heapq.merge(*runs.values(), key=lambda e: e.envelope.timestamp))
