"""Where the queue sends a whole batch: to the filter worker with the fewest batches in hand.

Each batch goes to one partition of `filter-requests`, and whoever owns that partition walks every
node for it. Workers say which partitions they own in every answer (`ShardFiltered.owned`); the
partitions one worker owns are one destination. Partitions no answer has named yet are taken as
one more destination, so a new worker is found by sending it work. The number of destinations
known is the most batches the queue keeps at the workers at once (`workers`).

Among destinations with as few batches in hand, the first in a fixed order is chosen, so the
batches out at once go to as few workers as they need. A worker follows the log only as far as its
requests ask (`LogFollower(on_demand=True)`): one that is sent nothing folds nothing, and soon
looks for requests once a second only (`shared.protocol.resting`), so workers beyond what the
queue keeps busy cost next to nothing, where spreading batches over all of them made every
worker fold the whole log.

`most` bounds the destinations used at once to the first that many in that order (a suspect one
passed over): where every process shares a few cores, a second worker busy at the same time only
waits for a CPU, and it folds the whole log besides. Batches beyond them wait at the first
destinations' workers, behind the batch in hand. Measured on two cores, one destination against
all of them, 1/2/4/8 workers (CPU ms a pod, all processes): SchedulingBasic 0.595 / 0.581 / 0.634 /
0.582 against 0.589 / 0.608 / 0.668 / 0.662, TopologySpreading 1.022 / 1.013 / 0.881 / 0.893
against 0.908 / 0.970 / 0.978 / 1.063.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence

SPREAD = (0, 4, 2, 6, 1, 5, 3, 7)
"""The order partitions are tried in: under the range assignor, the first 1, 2, 4 and 8 of them
belong to as many different workers when 1, 2, 4 and 8 run."""


UNNAMED: frozenset[int] = frozenset()
"""The destination of every partition no answer has named."""

PRIME_AFTER_S = 1.0
"""A destination the queue may send batches to that was sent nothing for this long is sent an empty
request (`primes`) as a batch goes out: its worker folds the log up to the queue's watermark
meanwhile, so the first batch it gets does not wait while it folds all the log since (on 50,000
nodes, seconds for a worker sent nothing yet, and every later batch waits behind that one's
decision). An idle queue sends them too, after `KEEP_AWAKE_S`, so that the worker does not rest
(`shared.protocol.resting`)."""


class Dispatcher:
    def __init__(self, partitions: int | Sequence[int], most: int = 0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """`partitions`: how many `filter-requests` has, or the ones this queue may send to (its
        share's slice, `services.queue.share`)."""
        mine = list(range(partitions)) if isinstance(partitions, int) else list(partitions)
        self.partitions = frozenset(mine)
        self.most = most
        """The most destinations batches go to at once (0: every one known)."""
        self._clock = clock
        self._last: dict[frozenset[int], float] = {}
        """Destination (`_one`) → when it was last sent a batch or a primer."""
        # The fixed order over the slice: SPREAD's, by position within it.
        self._order = [mine[k] for k in SPREAD if k < len(mine)] + [p for k, p in enumerate(mine) if k not in SPREAD]
        self._owner: dict[int, frozenset[int]] = {}
        """Partition → the partitions its owner named in its latest answer."""
        self._sent: dict[str, int] = {}
        """Batch id → the partition its request went to, until answered."""
        self._suspect: set[int] = set()
        """Partitions of a worker that left a batch unanswered, tried last until an answer names them."""

    def owned(self, partitions: Sequence[int]) -> None:
        """An answer named the partitions its worker owns now."""
        group = frozenset(p for p in partitions if p in self.partitions)
        if not group:
            return
        for p in group:
            self._owner[p] = group
        self._suspect -= group

    def workers(self) -> int:
        """Destinations known: workers that answered, and one for partitions none has named."""
        groups = set(self._owner.values())
        unnamed = any(p not in self._owner for p in self.partitions)
        return max(1, len(groups) + unnamed)

    def choose(self, batch_id: str, avoid: int | None = None) -> int:
        """The partition for `batch_id`'s request: the destination with the fewest batches in hand,
        the earliest in the fixed order among equals, a suspect one last. Among the partitions no
        answer named (one destination), the one with the fewest in hand: batches out before the
        answers spread over the partitions most likely to be different workers'. `avoid`: a
        partition that did not answer in time, whose worker's other partitions are passed over too
        (it would queue the batch behind the first)."""
        silent = self._owner.get(avoid, frozenset()) | {avoid} if avoid is not None else frozenset()
        load: dict[frozenset[int], int] = {}
        each: dict[int, int] = {}
        for p in self._sent.values():
            g = self._owner.get(p, UNNAMED)
            load[g] = load.get(g, 0) + 1
            each[p] = each.get(p, 0) + 1
        candidates = [(k, p) for k, p in enumerate(self._order) if p not in silent] or [(0, self._order[0])]
        if self.most:
            candidates = self._first_destinations(candidates)

        def least(pairs: Iterable[tuple[int, int]], in_hand: Callable[[int], int]) -> int:
            return min(pairs, key=lambda kp: (kp[1] in self._suspect, in_hand(kp[1]), kp[0]))[1]

        chosen = least(candidates, lambda p: load.get(self._owner.get(p, UNNAMED), 0))
        if chosen not in self._owner:
            chosen = least([kp for kp in candidates if kp[1] not in self._owner], lambda p: each.get(p, 0))
        self._sent[batch_id] = chosen
        self._last[self._one(chosen)] = self._clock()
        return chosen

    def primes(self, after_s: float = PRIME_AFTER_S) -> list[int]:
        """The partitions to send an empty request to now, one per destination among the first
        `most` in order (each unnamed partition one, its owner unknown) that has no batch in hand
        and was sent nothing for `after_s`; suspect ones are passed over. Each counts as sent to
        now."""
        now = self._clock()
        in_hand = {self._one(p) for p in self._sent.values()}
        seen: set[frozenset[int]] = set()
        out: list[int] = []
        for p in self._order:
            one = self._one(p)
            if one in seen or p in self._suspect:
                continue
            if self.most and len(seen) == self.most:
                break
            seen.add(one)
            if one not in in_hand and now - self._last.get(one, -math.inf) >= after_s:
                self._last[one] = now
                out.append(p)
        return out

    def _one(self, partition: int) -> frozenset[int]:
        """The destination `partition` stands for when priming: its owner's partitions, or itself."""
        return self._owner.get(partition) or frozenset((partition,))

    def _first_destinations(self, candidates: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """The candidates of the first `most` destinations in order, suspect ones passed over
        (all of `candidates` when every one is suspect)."""
        first: list[frozenset[int]] = []
        for _, p in candidates:
            group = self._owner.get(p, UNNAMED)
            if p not in self._suspect and group not in first:
                first.append(group)
                if len(first) == self.most:
                    break
        return [kp for kp in candidates if self._owner.get(kp[1], UNNAMED) in first] or candidates

    def answered(self, batch_id: str) -> None:
        self._sent.pop(batch_id, None)

    def forget(self, partition: int) -> None:
        """A partition whose batch went unanswered: what it was said to belong to is stale, and its
        worker's partitions are tried last until an answer names them again."""
        self._suspect |= self._owner.get(partition, frozenset()) | {partition}
        self._owner.pop(partition, None)
