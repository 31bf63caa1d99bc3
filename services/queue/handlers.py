"""The queue's consumed results: shard answers resolve gathers; preemption outcomes complete the
attempts that asked for them. Cluster events reach the scheduler through its log follower."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from services.runtime import Handler
from shared.events import OutgoingEvent, PreemptionDecided, ReceivedEvent, ShardFiltered

from .gather import Gatherer
from .scheduler import Scheduler

log = logging.getLogger(__name__)


class QueueHandler(Handler):
    def __init__(self, gatherer: Gatherer, scheduler: Scheduler) -> None:
        self.gatherer, self.scheduler = gatherer, scheduler

    async def handle(self, event: ReceivedEvent) -> Sequence[OutgoingEvent]:
        payload = event.payload
        if isinstance(payload, ShardFiltered):
            self.gatherer.offer(payload)
        elif isinstance(payload, PreemptionDecided):
            return self.scheduler.preemption_decided(event.envelope)
        return []
