"""A batch's filter request, sent whole to one filter worker (the one with the fewest batches in
hand, `Dispatcher`), sent elsewhere when that one stays silent, and the answers gathered; beside
it, and while the queue is idle, empty requests that prime the idle workers."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

from shared.errors import BrokerUnavailable, RecordTooLarge
from shared.events import FILTER_REQUESTS, Assumed, FilterBatchRequested, OutgoingEvent, envelope
from shared.events.ids import random_id
from shared.protocol.answers import Answer

from .dispatch import PRIME_AFTER_S
from .gather import Gatherer

log = logging.getLogger(__name__)

Publish = Callable[[Sequence[OutgoingEvent]], Awaitable[None]]


class Scatter:
    def __init__(self, gatherer: Gatherer, publish: Publish, producer: str, timeout_s: float) -> None:
        """`timeout_s`: how long a worker may stay silent before the request goes to another."""
        self.gatherer, self.publish, self.producer, self.timeout_s = gatherer, publish, producer, timeout_s
        self._priming: asyncio.Future[None] | None = None
        """The primers' publish in flight (`_prime`)."""

    async def send(self, request: FilterBatchRequested, stopping: asyncio.Event) -> dict[str, list[Answer]]:
        """One request for the whole batch, to the worker with the fewest batches in hand (sent
        elsewhere when it stays silent); every shard's answers by pod uid."""
        self.gatherer.expect(request.batch_id, request.phase)
        dispatcher = self.gatherer.dispatcher
        partition = dispatcher.choose(request.batch_id)
        try:
            await self._publish(request, partition)
            if request.phase == "filter":
                self.prime(request.cycle, lambda: (request.watermark, request.assumed), request.answer_partition)
            while True:
                results = await self.gatherer.wait(request.batch_id, request.phase, self.timeout_s)
                if results is not None:
                    return results
                if stopping.is_set():
                    raise asyncio.CancelledError
                log.warning("queue: partition %d silent for batch %s; sending again", partition, request.batch_id)
                silent, partition = partition, dispatcher.choose(request.batch_id, avoid=partition)
                dispatcher.forget(silent)
                await self._publish(request, partition)
        finally:
            dispatcher.answered(request.batch_id)
            self.gatherer.forget(request.batch_id, request.phase)

    async def _publish(self, request: FilterBatchRequested, partition: int) -> None:
        await self.publish([OutgoingEvent(FILTER_REQUESTS, envelope(request, producer=self.producer),
                                          partition=partition)])

    def prime(self, cycle: int, mark: Callable[[], tuple[dict[str, list[int]], list[Assumed]]],
              answer_partition: int | None, after_s: float = PRIME_AFTER_S) -> None:
        """An empty request at the view's watermark (`mark`: it and the assumptions, which the
        worker overlays) to each worker `Dispatcher.primes` names: it folds the log that far and
        answers with nothing, naming the partitions it owns, and does not rest
        (`shared.protocol.resting`). Sent as a batch goes out and, to those sent nothing for
        `after_s`, while the queue is idle; best effort, beside the batch's wait (a partition
        without a leader must not hold the batch up), one publish at a time: a worker not primed
        folds at its first batch."""
        if self._priming is not None and not self._priming.done():
            return
        partitions = self.gatherer.dispatcher.primes(after_s)
        if not partitions:
            return
        watermark, assumed = mark()
        primers = [OutgoingEvent(FILTER_REQUESTS, envelope(FilterBatchRequested(
            batch_id=str(random_id()), cycle=cycle, phase="filter", pods=[], watermark=watermark,
            assumed=assumed, whole=True, answer_partition=answer_partition),
            producer=self.producer), partition=p) for p in partitions]
        self._priming = asyncio.ensure_future(self._publish_primers(primers))

    async def _publish_primers(self, primers: list[OutgoingEvent]) -> None:
        try:
            await self.publish(primers)
        except (BrokerUnavailable, RecordTooLarge):
            log.warning("queue: priming %d idle filter workers failed", len(primers), exc_info=True)
