"""What the filter worker's tests share: the partitions their views' watermarks name, a wait that
finds the view there at once, and a request answered."""

from __future__ import annotations

from collections.abc import Mapping

from services.filter.handlers import FilterHandler
from shared.events import (
    FILTER_REQUESTS,
    NODES,
    PODS,
    FilterBatchRequested,
    Position,
    ReceivedEvent,
    ShardFiltered,
    envelope,
)

PARTITIONS = {NODES: 1, PODS: 1}


async def reached(watermark: Mapping[str, list[int]], timeout: float) -> bool:
    return True


async def answer(handler: FilterHandler, request: FilterBatchRequested, offset: int = 0) -> ShardFiltered:
    """The handler's answer to `request`, read at `offset` of filter-requests (a request sent again
    is a new envelope, a new event id, naming the same batch)."""
    [out] = await handler.handle_batch([ReceivedEvent(envelope(request, producer="queue"),
                                                      Position(FILTER_REQUESTS, 0, offset))])
    answered = out.envelope.payload
    assert isinstance(answered, ShardFiltered)
    return answered
