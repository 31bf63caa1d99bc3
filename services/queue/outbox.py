"""The queue's decisions on their way out: added as a cycle decides, published together when it
ends (one produce round trip per batch, not per pod), kept in order across a failed publish.

A publish that fails leaves every event it did not deliver in the outbox, ahead of any added
since, for the next flush: a placed pod waits for its bind request, which must not be dropped; one
delivered twice gets the same answer (the binder keeps each request's outcome by its event id, and
never binds a pod twice). An event no record can hold is left out alone, and said so to `left_out`: published again,
it would be refused again, and every decision after it with it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from shared.errors import RecordTooLarge
from shared.events import OutgoingEvent

from .scatter import Publish

log = logging.getLogger(__name__)

LeftOut = Callable[[OutgoingEvent, RecordTooLarge], None]


class Outbox:
    def __init__(self, left_out: LeftOut) -> None:
        """`left_out`: told of each event left out because no record can hold it."""
        self._events: list[OutgoingEvent] = []
        self._left_out = left_out

    def __bool__(self) -> bool:
        return bool(self._events)

    def add(self, *events: OutgoingEvent) -> None:
        self._events.extend(events)

    async def flush(self, publish: Publish) -> None:
        """Publish every event held, in the order added."""
        out, self._events = self._events, []
        if not out:
            return
        try:
            await publish(out)
        except RecordTooLarge:
            await self._publish_each(publish, out)
        except BaseException:
            self._put_back(out)
            raise

    async def _publish_each(self, publish: Publish, events: list[OutgoingEvent]) -> None:
        for i, event in enumerate(events):
            try:
                await publish([event])
            except RecordTooLarge as exc:
                log.error("queue: %s %s left out: %s", event.envelope.type, event.envelope.key, exc)
                self._left_out(event, exc)
            except BaseException:
                self._put_back(events[i:])
                raise

    def _put_back(self, events: list[OutgoingEvent]) -> None:
        self._events[:0] = events
