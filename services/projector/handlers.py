"""The projector's handler: each fetched batch goes to the projection store in one transaction.

The store writes the events, the read-model rows and the group's next offsets together, so the
handler keeps no state and publishes nothing; positions come from the store on every assignment.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from services.runtime import Handler
from shared.events import OutgoingEvent, ReceivedEvent
from shared.ports import ApplyResult, ProjectionStore, TopicPartition
from shared.projection.order import in_time_order

log = logging.getLogger(__name__)


class ProjectorHandler(Handler):
    def __init__(self, store: ProjectionStore, group_id: str) -> None:
        self.store = store
        self.group_id = group_id
        self.totals = ApplyResult()

    async def handle(self, event: ReceivedEvent) -> Sequence[OutgoingEvent]:
        return await self.handle_batch([event])

    async def handle_batch(self, events: Sequence[ReceivedEvent]) -> Sequence[OutgoingEvent]:
        result = await self.store.apply(self.group_id, in_time_order(events))
        t = self.totals
        self.totals = ApplyResult(t.applied + result.applied, t.duplicates + result.duplicates, t.stale + result.stale)
        if result.duplicates or result.stale:
            log.info("projector: skipped %d duplicate and %d already applied event(s)", result.duplicates, result.stale)
        return []

    async def positions(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, int]:
        return await self.store.positions(self.group_id, partitions)
