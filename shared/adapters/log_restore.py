"""Rebuild a broker's lost log from the event store, before any service starts.

The embedded broker keeps its topics in memory; PostgreSQL keeps every event the projector stored
and every intent the gateway acknowledged. On a broker with empty topics, `restore_log`:
1. reads the stored events of the kept topics (`TopicSpec.kept`) in storage order, and keeps those
   whose ground is kept too (`shared.events.restoration.causally_complete`); the others are taken
   out of the event store, and the read-model rows they touched are folded again without them;
2. writes each kept partition back, every event at its recorded offset, `GAP` fillers between
   (a partition runs at least to the furthest position a projector stored for it, and to every
   position a stored event names: `referenced_ends`);
3. forgets the projector's positions on the topics that start empty;
4. publishes again the accepted intents the event store lacks, in the order they were accepted.
The services then start on a log equal to the event store, and the read model equals its fold.
A broker that still has records on a kept topic is left alone.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import Counter
from dataclasses import dataclass

from aiokafka import TopicPartition
from aiokafka.errors import KafkaError
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from shared.errors import BrokerUnavailable, EmbeddedStackError
from shared.events import GAP, Envelope, OutgoingEvent, ReceivedEvent, TopicRegistry, encode
from shared.events.restoration import causally_complete, partition_logs, referenced_ends
from shared.projection import ReadModel, RowKey, apply, keys_for
from shared.settings import Settings

from .kafka import KafkaPublisher, make_consumer, make_producer, stop_consumer
from .kafka.tail import Tail
from .postgres import AcceptedIntents, PostgresProjectionStore, engine_scope
from .postgres.event_store import events_table, from_record

log = logging.getLogger(__name__)

DRAIN_FETCH_MS = 1000
"""How long a look past the stored positions waits for records (they are in the log already; a
first fetch after the consumer starts is the slow one)."""
DRAIN_POLL_S = 0.1


@dataclass(frozen=True, slots=True)
class RestoreReport:
    events: int = 0
    """Events written back at their offsets."""
    gaps: int = 0
    """Offsets filled with `GAP`."""
    dropped: int = 0
    """Stored events whose ground was lost (taken out of the event store)."""
    intents: int = 0
    """Accepted intents published again."""
    seconds: float = 0.0
    skipped: str = ""
    """Why nothing was done ("" when the log was rebuilt)."""

    def summary(self) -> str:
        if self.skipped:
            return f"log not rebuilt: {self.skipped}"
        return (f"log rebuilt from the event store in {self.seconds:.1f} s: {self.events} events, {self.gaps} gap "
                f"fillers, {self.dropped} dropped without their cause, {self.intents} accepted intents published again")


async def restore_log(settings: Settings, registry: TopicRegistry) -> RestoreReport:
    assert settings.database_url
    started = time.perf_counter()
    kept_topics = [spec.name for spec in registry if spec.kept]
    if await _records_on(settings, registry, kept_topics):
        return RestoreReport(skipped="the broker still has its log")
    async with engine_scope(settings.database_url, pool_size=2) as engine:
        projection = PostgresProjectionStore(engine)
        stored = await _stored_events(engine, kept_topics)
        kept, dropped = causally_complete(stored)
        if dropped:
            await _forget(projection, kept, dropped)
        ends = await projection.furthest_positions(kept_topics)
        for tp, end in referenced_ends(kept).items():
            if tp[0] in kept_topics and end > ends.get(tp, 0):
                ends[tp] = end
        logs = partition_logs(kept, ends)
        await projection.reset_positions(topics=[spec.name for spec in registry if not spec.kept])
        intents = AcceptedIntents(engine)
        again = await intents.unstored()
        await _write_back(settings, registry, logs, again)
        await intents.forget_stored()
    return RestoreReport(events=len(kept), gaps=sum(log.count(None) for log in logs.values()), dropped=len(dropped),
                         intents=len(again), seconds=time.perf_counter() - started)


async def wait_stored(settings: Settings, registry: TopicRegistry, timeout_s: float) -> int:
    """Wait until the event store holds every event of the kept topics the broker has (the services
    that write have stopped), for at most `timeout_s`; the events it lacked at the last look (0:
    none). A cluster stopping on an embedded broker calls it before stopping the projector: the
    broker's log goes with it, and only what the event store holds comes back.

    Each look reads the records past the furthest positions a projector stored and asks the store
    for their events: fillers, undecodable records and second copies of an event are skipped (the
    projector stores no position past them at a partition's end), and the broker is not asked for
    the log's ends (`Tail` says why)."""
    kept = [spec.name for spec in registry if spec.kept]
    assert settings.database_url
    deadline = time.monotonic() + timeout_s
    consumer = make_consumer(settings, group_id=None, client_id="berth-drain")
    try:
        await consumer.start()
        async with engine_scope(settings.database_url, pool_size=1) as engine:
            projection = PostgresProjectionStore(engine)
            while True:
                stored = await projection.furthest_positions(kept)
                tail = Tail(consumer, registry, kept, lambda topic, partition: stored.get((topic, partition), 0))
                ids = {r.event.event_id for r in await tail.fetch(DRAIN_FETCH_MS) if isinstance(r.event, Envelope)}
                left = len(ids - await _stored_ids(engine, ids)) if ids else 0
                if not left or time.monotonic() >= deadline:
                    return left
                await asyncio.sleep(DRAIN_POLL_S)
    except KafkaError as exc:
        raise BrokerUnavailable(f"reading the broker's log: {type(exc).__name__}: {exc}") from exc
    finally:
        await stop_consumer(consumer)


async def _stored_ids(engine: AsyncEngine, ids: set[uuid.UUID]) -> set[uuid.UUID]:
    stmt = select(events_table.c.event_id).where(events_table.c.event_id.in_(list(ids)))
    async with engine.connect() as conn:
        return set((await conn.execute(stmt)).scalars().all())


async def _records_on(settings: Settings, registry: TopicRegistry, topics: list[str]) -> bool:
    consumer = make_consumer(settings, group_id=None, client_id="berth-restore")
    try:
        await consumer.start()
        tps = [TopicPartition(registry.physical(t), p) for t in topics for p in range(registry.spec(t).partitions)]
        ends = await consumer.end_offsets(tps)
        return any(end > 0 for end in ends.values())
    except KafkaError as exc:
        raise BrokerUnavailable(f"reading the broker's log ends: {type(exc).__name__}: {exc}") from exc
    finally:
        await stop_consumer(consumer)


async def _stored_events(engine: AsyncEngine, topics: list[str]) -> list[ReceivedEvent]:
    stmt = select(events_table).where(events_table.c.topic.in_(topics)).order_by(events_table.c.seq)
    async with engine.connect() as conn:
        result = await conn.stream(stmt)
        return [from_record(row) async for row in result]


async def _forget(projection: PostgresProjectionStore, kept: list[ReceivedEvent], dropped: list[ReceivedEvent]) -> None:
    """Take `dropped` out of the store and fold the rows they touched again from `kept` alone."""
    keys: set[RowKey] = {k for e in dropped for k in keys_for(e.envelope)}
    rows = ReadModel()
    for e in kept:
        if not keys.isdisjoint(keys_for(e.envelope)):
            apply(rows, e.envelope)
    kinds = Counter(e.envelope.type for e in dropped)
    log.warning("restore: %d stored events rest on events the store lost and are dropped (%s)", len(dropped),
                ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items())))
    for e in dropped:
        log.debug("restore: dropped %s %s at %s/%d/%d", e.envelope.type, e.envelope.event_id, e.position.topic,
                  e.position.partition, e.position.offset)
    await projection.forget_events([e.envelope.event_id for e in dropped], rows, keys)


async def _write_back(settings: Settings, registry: TopicRegistry, logs: dict[tuple[str, int], list[Envelope | None]],
                      again: list[OutgoingEvent]) -> None:
    producer = make_producer(settings, client_id="berth-restore")
    try:
        await producer.start()
        for (topic, partition), records in logs.items():
            physical = registry.physical(topic)
            sent = [await producer.send(physical, value=GAP if env is None else encode(env),
                                        key=None if env is None else env.key.encode(), partition=partition)
                    for env in records]
            for offset, future in enumerate(sent):
                meta = await future
                if meta.offset != offset:
                    raise EmbeddedStackError(f"rebuilding {topic} partition {partition}: offset {offset} was written "
                                             f"at {meta.offset}; the broker's log is not empty")
        await KafkaPublisher(producer, registry).publish(again)
    except KafkaError as exc:
        raise BrokerUnavailable(f"rebuilding the log: {type(exc).__name__}: {exc}") from exc
    finally:
        await producer.stop()
