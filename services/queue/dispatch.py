"""Where the queue sends a whole batch: to the filter worker with the fewest batches in hand.

Each batch goes to one partition of `filter-requests`, and whoever owns that partition walks every
node for it. Workers say which partitions they own in every answer (`ShardFiltered.owned`); the
partitions one worker owns are one destination. Partitions no answer has named yet are taken as
one more destination, so a new worker is found by sending it work. The number of destinations
known is how many batches the queue keeps at the workers at once (`workers`).
"""

from __future__ import annotations

from collections.abc import Sequence

SPREAD = (0, 4, 2, 6, 1, 5, 3, 7)
"""The order partitions are tried in: under the range assignor, consecutive batches land on
different workers for 1, 2, 4 and 8 of them even before any answer named their partitions."""


class Dispatcher:
    def __init__(self, partitions: int) -> None:
        self.partitions = partitions
        self._order = [p for p in SPREAD if p < partitions] + [p for p in range(partitions) if p not in SPREAD]
        self._owner: dict[int, frozenset[int]] = {}
        """Partition → the partitions its owner named in its latest answer."""
        self._sent: dict[str, int] = {}
        """Batch id → the partition its request went to, until answered."""
        self._turn = 0

    def owned(self, partitions: Sequence[int]) -> None:
        """An answer named the partitions its worker owns now."""
        group = frozenset(p for p in partitions if 0 <= p < self.partitions)
        if not group:
            return
        for p in group:
            self._owner[p] = group

    def workers(self) -> int:
        """Destinations known: workers that answered, and one for partitions none has named."""
        groups = set(self._owner.values())
        unnamed = any(p not in self._owner for p in range(self.partitions))
        return max(1, len(groups) + unnamed)

    def choose(self, batch_id: str, avoid: int | None = None) -> int:
        """The partition for `batch_id`'s request: the destination with the fewest batches in hand,
        the earliest in turn among equals; `avoid`: a partition that did not answer in time, whose
        worker's other partitions are passed over too (it would queue the batch behind the first)."""
        silent = self._owner.get(avoid, frozenset()) | {avoid} if avoid is not None else frozenset()
        load: dict[frozenset[int] | None, int] = {}
        for p in self._sent.values():
            g = self._owner.get(p)
            load[g] = load.get(g, 0) + 1
        best: tuple[int, int] | None = None
        chosen = self._order[0]
        n = len(self._order)
        for k in range(n):
            p = self._order[(self._turn + k) % n]
            if p in silent:
                continue
            key = (load.get(self._owner.get(p), 0), k)
            if best is None or key < best:
                best, chosen = key, p
        self._turn = (self._order.index(chosen) + 1) % n
        self._sent[batch_id] = chosen
        return chosen

    def answered(self, batch_id: str) -> None:
        self._sent.pop(batch_id, None)

    def forget(self, partition: int) -> None:
        """A partition whose batch went unanswered: what it was said to belong to is stale."""
        self._owner.pop(partition, None)
