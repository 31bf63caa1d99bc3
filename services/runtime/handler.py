"""What a service plugs into the runtime: a handler of decoded events, free of Kafka types.

    class Binder(Handler):
        async def handle(self, event: ReceivedEvent) -> Sequence[OutgoingEvent]:
            ...  # decide, return the events to publish

The runtime publishes what `handle` returns and only then commits the input's offsets, so a crash
anywhere means the event is handled again: handlers must be idempotent (same input, same effect;
`shared.events.derived_id` gives outputs stable ids).

A handler signals failures with `shared.errors`: a retriable error (DatabaseUnavailable …) makes the
runtime back off and retry; any other error dead-letters the event (after a few tries for errors
from outside Berth's tree) and the loop moves on.
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.events import OutgoingEvent, ReceivedEvent
from shared.ports import TopicPartition


class Handler:
    """Base handler: override `handle` (one event) or `handle_batch` (a fetched batch, in order)."""

    async def handle(self, event: ReceivedEvent) -> Sequence[OutgoingEvent]:
        raise NotImplementedError

    async def handle_batch(self, events: Sequence[ReceivedEvent]) -> Sequence[OutgoingEvent]:
        """Handle a batch; the default hands each event to `handle` in order.

        If this raises a non-retriable error, the runtime retries the events one by one to isolate
        the one to dead-letter, so events before it may be handled twice.
        """
        out: list[OutgoingEvent] = []
        for event in events:
            out.extend(await self.handle(event))
        return out

    async def tick(self) -> Sequence[OutgoingEvent]:
        """Called every `ServiceConfig.tick_interval_s` (when set) between batches: time-driven work
        such as flushing a backoff queue. What it returns is published like a batch's outputs."""
        return []

    async def positions(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, int]:
        """Positions the handler keeps itself (with its effects); the runtime seeks there on assignment.

        Empty by default: the consumer group's committed offsets decide.
        """
        return {}

    async def on_assigned(self, partitions: Sequence[TopicPartition]) -> None:
        """Partitions (logical topic, partition) this replica now owns: rebuild their state here."""

    async def on_revoked(self, partitions: Sequence[TopicPartition]) -> None:
        """Partitions about to move to another replica: drop their state here."""
