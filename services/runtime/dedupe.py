"""A bounded memory of recently handled events, so a redelivery is dropped before the handler.

Keyed by (topic, partition, event id): a redelivered message always comes back on the same partition,
while a broadcast event legitimately arrives once per partition with the same id.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict


class RecentEvents:
    def __init__(self, capacity: int = 50_000) -> None:
        self.capacity = capacity
        self._seen: OrderedDict[tuple[str, int, uuid.UUID], None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._seen)

    def seen(self, topic: str, partition: int, event_id: uuid.UUID) -> bool:
        key = (topic, partition, event_id)
        if key in self._seen:
            self._seen.move_to_end(key)
            return True
        return False

    def remember(self, topic: str, partition: int, event_id: uuid.UUID) -> None:
        self._seen[(topic, partition, event_id)] = None
        self._seen.move_to_end((topic, partition, event_id))
        while len(self._seen) > self.capacity:
            self._seen.popitem(last=False)

    def forget_partition(self, topic: str, partition: int) -> None:
        """Drop a revoked partition's entries (its next owner may legitimately hand them back)."""
        for key in [k for k in self._seen if k[0] == topic and k[1] == partition]:
            del self._seen[key]
