"""One fetched batch through the pipeline: decode → dedupe → handle → publish → commit.

Nothing here knows which service it runs; `Service` (service.py) owns the clients and the lifecycle
and calls `BatchPipeline.process` for every non-empty fetch.

Effects become durable before offsets are committed: the handler's outputs and any dead letters are
published (acks=all) first, so a crash at any point means the batch is consumed again, never lost.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition
from aiokafka.errors import KafkaError

from shared.errors import BerthError, DecodeError, GapRecord, RecordTooLarge, is_retriable
from shared.events import (
    DEAD_LETTERS,
    DeadLettered,
    Envelope,
    OutgoingEvent,
    Position,
    ReceivedEvent,
    TopicRegistry,
    decode,
    envelope,
)
from shared.ports import Publisher

from .dedupe import RecentEvents
from .handler import Handler
from .metrics import RuntimeMetrics

log = logging.getLogger(__name__)
T = TypeVar("T")
_DEAD_LETTER_NS = uuid.UUID("6f1d3c1e-8b36-4f7e-9a51-1f3c4b2d9e07")


class Stopping(Exception):
    """The service is stopping: abandon the batch without committing (it will be consumed again)."""


@dataclass
class RetryPolicy:
    initial: float = 0.05
    maximum: float = 5.0
    unexpected_attempts: int = 3
    """Tries for an exception from outside Berth's error tree before the event is dead-lettered."""

    def delay(self, attempt: int) -> float:
        return min(self.maximum, self.initial * 2 ** max(0, attempt - 1))


DEAD_LETTER_RAW_BYTES = 512 << 10
"""The most of a message's bytes its dead letter carries: the letter must fit a record whatever the
message (base64 makes them a third larger, and a record is at least 1 MiB); a larger message is
named by its topic, partition and offset, where it stays."""
DEAD_LETTER_KEY_BYTES = 4096
"""The most of a message's key a dead letter carries (each byte read as up to three), and of its
reason: with the value's 683 KiB of base64, a letter stays well under 1 MiB."""
STOPPING_COMMIT_WAIT_S = 2.0
"""How long a commit under way may still take once the service is asked to stop."""
COPY_BYTES = 4096
"""Messages at least this large are decoded once per fetched batch when byte-identical copies
arrive on several partitions (a request broadcast to every shard)."""


def decoded_once(copies: dict[tuple[str, bytes], Envelope], topic: str, value: bytes) -> Envelope:
    """`value` decoded; a large one kept in `copies` (one fetched batch's), so its copies are not
    decoded again."""
    if len(value) < COPY_BYTES:
        return decode(value, topic=topic)
    env = copies.get((topic, value))
    if env is None:
        env = copies[(topic, value)] = decode(value, topic=topic)
    return env


class BatchPipeline:
    def __init__(
        self,
        *,
        service: str,
        group_id: str,
        handler: Handler,
        publisher: Publisher,
        registry: TopicRegistry,
        metrics: RuntimeMetrics,
        recent: RecentEvents,
        retry: RetryPolicy,
        stopping: asyncio.Event,
    ) -> None:
        self.service, self.group_id = service, group_id
        self.handler, self.publisher, self.registry = handler, publisher, registry
        self.metrics, self.recent, self.retry, self.stopping = metrics, recent, retry, stopping

    async def process(self, consumer: AIOKafkaConsumer, records: dict[TopicPartition, list[ConsumerRecord]]) -> None:
        received: list[ReceivedEvent] = []
        raw: dict[Position, ConsumerRecord] = {}
        dead: list[OutgoingEvent] = []
        next_offsets: dict[TopicPartition, int] = {}
        copies: dict[tuple[str, bytes], Envelope] = {}
        consumed: dict[tuple[str, str], int] = {}
        for tp, messages in records.items():
            topic = self.registry.logical(tp.topic)
            for message in messages:
                next_offsets[tp] = message.offset + 1
                position = Position(topic, tp.partition, message.offset)
                try:
                    if message.value is None:
                        raise DecodeError("message has no value", topic=topic)
                    env = decoded_once(copies, topic, message.value)
                except GapRecord:
                    continue  # an offset filler of a restored log: nothing to handle
                except DecodeError as exc:
                    dead.append(self.dead_letter(message, position, f"undecodable: {exc}", cause="decode"))
                    continue
                if self.recent.seen(topic, tp.partition, env.event_id):
                    self.metrics.duplicates.labels(self.service, topic).inc()
                    continue
                raw[position] = message
                received.append(ReceivedEvent(env, position))
                consumed[(topic, env.type)] = consumed.get((topic, env.type), 0) + 1
        # Counted once per kind and batch: a labelled child's lookup per event was a few percent
        # of a busy consumer's time.
        for (topic, kind), count in consumed.items():
            self.metrics.consumed.labels(self.service, topic, kind).inc(count)

        outputs, failed = await self._handle(received)
        dead += [self.dead_letter(raw[e.position], e.position, reason, cause="handler") for e, reason in failed]
        try:
            await self._publish([*outputs, *dead])
        except RecordTooLarge:
            # An output no record can hold: the events are handled and published one at a time,
            # and one whose output is refused is dead-lettered (retried, it would be refused again).
            unhandled = {e.position for e, _ in failed}
            for event in [e for e in received if e.position not in unhandled]:
                out, bad = await self._handle([event])
                try:
                    await self._publish(out)
                except RecordTooLarge as exc:
                    bad = [(event, f"its output cannot be published: {exc}")]
                dead += [self.dead_letter(raw[e.position], e.position, reason, cause="output") for e, reason in bad]
            await self._publish(dead)
        await self._commit(consumer, next_offsets)
        for event in received:
            self.recent.remember(event.position.topic, event.position.partition, event.envelope.event_id)

    async def tick(self) -> None:
        """The handler's time-driven outputs, published with the same retries as a batch's."""
        try:
            outputs = await self._with_retries(self.handler.tick, "tick")
        except Stopping:
            raise
        except Exception:
            log.exception("%s: tick failed", self.service)  # nothing to dead-letter; try next time
            return
        await self._publish(list(outputs))

    # --- stages -------------------------------------------------------------------------------

    async def _handle(
        self, events: Sequence[ReceivedEvent]
    ) -> tuple[list[OutgoingEvent], list[tuple[ReceivedEvent, str]]]:
        """Outputs of the handler, and the events it could not handle (with the reason)."""
        if not events:
            return [], []
        try:
            return list(await self._with_retries(lambda: self.handler.handle_batch(events), "handle")), []
        except Stopping:
            raise
        except Exception as exc:
            if len(events) == 1:
                log.error("%s: dead-lettering %s at %s: %s", self.service, events[0].envelope.type,
                          events[0].position, exc, exc_info=not isinstance(exc, BerthError))
                return [], [(events[0], f"{type(exc).__name__}: {exc}")]
            log.warning("%s: batch of %d failed (%s); retrying one by one", self.service, len(events), exc)
            outputs: list[OutgoingEvent] = []
            failed: list[tuple[ReceivedEvent, str]] = []
            for event in events:
                out, bad = await self._handle([event])
                outputs += out
                failed += bad
            return outputs, failed

    async def _publish(self, events: list[OutgoingEvent]) -> None:
        if not events:
            return
        await self._with_retries(lambda: self.publisher.publish(events), "publish")
        for event in events:
            self.metrics.published.labels(self.service, event.topic).inc()

    async def _commit(self, consumer: AIOKafkaConsumer, offsets: dict[TopicPartition, int]) -> None:
        owned = consumer.assignment()
        offsets = {tp: o for tp, o in offsets.items() if tp in owned}
        if not offsets:
            return
        commit = asyncio.ensure_future(consumer.commit(offsets))
        stopping = asyncio.ensure_future(self.stopping.wait())
        try:
            # The client retries a commit while the coordinator is away, for as long as that lasts:
            # a service asked to stop gives it a moment, then leaves the batch uncommitted (it is
            # consumed again) rather than wait on.
            await asyncio.wait({commit, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if not commit.done():
                await asyncio.wait({commit}, timeout=STOPPING_COMMIT_WAIT_S)
            if not commit.done():
                commit.cancel()
                with contextlib.suppress(asyncio.CancelledError, KafkaError):
                    await commit
                raise Stopping
            commit.result()
        except KafkaError as exc:
            # A rebalance took the partitions away: their new owner consumes the batch again and
            # deduplicates. Nothing is lost, so carry on.
            log.warning("%s: offset commit failed (%s); the batch will be redelivered", self.service, exc)
        finally:
            stopping.cancel()
            if not commit.done():
                commit.cancel()  # the batch was cancelled while it committed (the service stops)

    async def _with_retries(self, call: Callable[[], Awaitable[T]], stage: str) -> T:
        attempt = 0
        unexpected_failures = 0  # retriable failures (a broker or database away) do not count here
        while True:
            if self.stopping.is_set():
                raise Stopping
            try:
                return await call()
            except Exception as exc:
                if not is_retriable(exc):
                    if isinstance(exc, BerthError):
                        raise
                    unexpected_failures += 1
                    if unexpected_failures >= self.retry.unexpected_attempts:
                        raise
                attempt += 1
                self.metrics.retries.labels(self.service, stage).inc()
                delay = self.retry.delay(attempt)
                log.warning("%s: %s failed (%s: %s); retry %d in %.2fs", self.service, stage,
                            type(exc).__name__, exc, attempt, delay)
                try:
                    await asyncio.wait_for(self.stopping.wait(), delay)
                except TimeoutError:
                    continue
                raise Stopping from exc

    def dead_letter(self, message: ConsumerRecord, position: Position, reason: str, *, cause: str) -> OutgoingEvent:
        """The DeadLettered event for a message; its id is derived from the origin, so redoing the
        batch after a crash republishes the same event rather than a second one."""
        self.metrics.dead_lettered.labels(self.service, position.topic, cause).inc()
        key = message.key[:DEAD_LETTER_KEY_BYTES].decode("utf-8", "replace") if message.key is not None else None
        value = message.value or b""
        if len(value) > DEAD_LETTER_RAW_BYTES:
            reason += f" (the message is {len(value)} bytes; its first {DEAD_LETTER_RAW_BYTES} are kept here)"
        payload = DeadLettered(
            origin_topic=position.topic,
            partition=position.partition,
            offset=position.offset,
            key=key,
            reason=reason[:DEAD_LETTER_KEY_BYTES],
            raw=base64.b64encode(value[:DEAD_LETTER_RAW_BYTES]).decode(),
        )
        event_id = uuid.uuid5(_DEAD_LETTER_NS,
                              f"{self.group_id}/{position.topic}/{position.partition}/{position.offset}")
        return OutgoingEvent(DEAD_LETTERS, envelope(payload, producer=self.service, event_id=event_id))
