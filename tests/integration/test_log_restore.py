"""A lost log rebuilt from the event store: every kept event back at its offset, fillers where none
was stored, events whose cause was lost taken out (and their rows folded again), the accepted
intents the store lacks published again."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from aiokafka import TopicPartition
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from shared.adapters.kafka import KafkaPublisher, make_consumer
from shared.adapters.log_restore import restore_log, wait_stored
from shared.adapters.postgres import AcceptedIntents, PostgresEventStore, PostgresProjectionStore
from shared.adapters.postgres.models import AcceptedIntent, ConsumerOffset
from shared.errors import GapRecord
from shared.events import (
    BINDS,
    FILTER_REQUESTS,
    GAP,
    PLACEMENTS,
    PODS,
    BindRequested,
    Envelope,
    FilterBatchRequested,
    OutgoingEvent,
    PodBound,
    PodSubmitted,
    Position,
    ReceivedEvent,
    decode,
    derived_id,
    encode,
    envelope,
)
from shared.projection import fold
from tests.builders import MakePod

from .fixtures import BerthTestEnv

pytestmark = pytest.mark.integration

NOW = datetime(2026, 11, 26, tzinfo=UTC)
GROUP = "berth-projector"


def _submitted(name: str) -> Envelope:
    return envelope(PodSubmitted(pod=MakePod().name(name).uid(name).req(cpu="1").obj()), producer="gateway",
                    timestamp=NOW)


def _bind(sub: Envelope) -> Envelope:
    assert isinstance(sub.payload, PodSubmitted)
    uid = sub.payload.pod.metadata.uid or ""
    return envelope(BindRequested(pod_uid=uid, pod=sub.payload.pod, node_name="n1", attempt_id=f"{uid}-1", seed=0),
                    producer="queue", timestamp=NOW)


def _bound(request: Envelope) -> Envelope:
    assert isinstance(request.payload, BindRequested)
    p = request.payload
    return envelope(PodBound(pod_uid=p.pod_uid, node_name=p.node_name, attempt_id=p.attempt_id), producer="binder",
                    caused_by=request, timestamp=NOW, event_id=derived_id(request.event_id, "PodBound"))


def _at(env: Envelope, topic: str, partition: int, offset: int) -> ReceivedEvent:
    return ReceivedEvent(env, Position(topic, partition, offset))


async def _log(env: BerthTestEnv, topic: str, partition: int) -> list[Envelope | None]:
    """The partition's records; None for a filler."""
    consumer = make_consumer(env.settings, group_id=None, client_id="test-read")
    await consumer.start()
    try:
        tp = TopicPartition(env.registry.physical(topic), partition)
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        out: list[Envelope | None] = []
        while True:
            batch = await consumer.getmany(tp, timeout_ms=500)
            if not batch:
                return out
            for message in batch[tp]:
                assert message.offset == len(out)
                try:
                    out.append(decode(message.value or b"", topic=topic))
                except GapRecord:
                    out.append(None)
    finally:
        await consumer.stop()


async def test_a_lost_log_is_rebuilt_from_the_event_store(berth_env: BerthTestEnv, engine: AsyncEngine,
                                                          publisher: KafkaPublisher) -> None:
    a, b, c, late = (_submitted(n) for n in ("a", "b", "c", "late"))
    bind_a, bind_b = _bind(a), _bind(b)
    bound_a, bound_b = _bound(bind_a), _bound(bind_b)
    batch = envelope(FilterBatchRequested(batch_id="b1", cycle=1, phase="filter", pods=[]),
                     producer="queue", timestamp=NOW)
    # What the projector stored before everything was killed: pods/0 has no event at offset 2 (it
    # was dead-lettered); b's bind request was never stored, its PodBound was.
    store = PostgresProjectionStore(engine)
    await store.apply(GROUP, [_at(a, PODS, 0, 0), _at(b, PODS, 0, 1), _at(c, PODS, 0, 3),
                              _at(bind_a, BINDS, 1, 0), _at(bound_a, PLACEMENTS, 1, 0), _at(bound_b, PLACEMENTS, 1, 1),
                              _at(batch, FILTER_REQUESTS, 5, 7)])
    assert (await store.load()).pods["b"].node_name == "n1"
    # The gateway acknowledged a, b, c and `late`; the projector never stored `late`.
    intents = AcceptedIntents(engine)
    await intents.record([OutgoingEvent(PODS, e) for e in (a, b, c, late)])

    report = await restore_log(berth_env.settings, berth_env.registry)

    assert (report.events, report.dropped, report.intents) == (5, 1, 1)
    pods_log = await _log(berth_env, PODS, 0)
    assert pods_log[:4] == [a, b, None, c]
    republished = [e.event_id for p in range(berth_env.registry.spec(PODS).partitions)
                   for e in (await _log(berth_env, PODS, p))[4 if p == 0 else 0:] if e is not None]
    assert republished == [late.event_id]
    assert await _log(berth_env, BINDS, 1) == [bind_a]
    assert await _log(berth_env, PLACEMENTS, 1) == [bound_a, None]
    assert await _log(berth_env, FILTER_REQUESTS, 5) == []  # requests between live services start empty

    model = await store.load()
    assert model.pods["a"].node_name == "n1"
    assert (model.pods["b"].phase, model.pods["b"].node_name) == ("Pending", ""), "b's bind was lost with its request"
    events = [e async for _, e in PostgresEventStore(engine).read()]
    assert bound_b.event_id not in {e.envelope.event_id for e in events}
    assert model == fold(e.envelope for e in events), "the read model is the fold of the store"
    async with engine.connect() as conn:
        topics = {r.topic for r in (await conn.execute(select(ConsumerOffset.__table__))).all()}
    assert FILTER_REQUESTS not in topics, "positions on topics that start empty are forgotten"
    assert [e.envelope.event_id for e in await intents.unstored()] == [late.event_id]

    again = await restore_log(berth_env.settings, berth_env.registry)
    assert again.skipped, "a broker that has its log is left alone"


async def test_a_stopping_cluster_waits_until_the_projector_stored_the_log(
        berth_env: BerthTestEnv, engine: AsyncEngine, publisher: KafkaPublisher) -> None:
    # The broker's log goes when it stops: `berth up` stops every service but the projector, then
    # waits (`wait_stored`) until the event store holds what they wrote last.
    a, b = _submitted("a"), _submitted("b")
    bind_a = _bind(a)
    await publisher.publish([OutgoingEvent(PODS, a, partition=0), OutgoingEvent(PODS, b, partition=0),
                             OutgoingEvent(BINDS, bind_a, partition=1)])
    assert await wait_stored(berth_env.settings, berth_env.registry, 0.2) == 3
    store = PostgresProjectionStore(engine)
    await store.apply(GROUP, [_at(a, PODS, 0, 0), _at(b, PODS, 0, 1)])
    # Past the stored position, a filler (a restore's) and a second copy of a stored event: no
    # projector stores a position past them, and nothing of them is missing.
    await publisher.publish_raw(PODS, GAP, partition=0)
    await publisher.publish_raw(PODS, encode(a), key=a.key.encode(), partition=0)
    assert await wait_stored(berth_env.settings, berth_env.registry, 0.2) == 1  # the bind request is not yet
    # Requests between live services (not kept) are not waited for.
    await publisher.publish([OutgoingEvent(FILTER_REQUESTS, envelope(
        FilterBatchRequested(batch_id="b1", cycle=1, phase="filter", pods=[]), producer="queue"), partition=0)])
    await store.apply(GROUP, [_at(bind_a, BINDS, 1, 0)])
    assert await wait_stored(berth_env.settings, berth_env.registry, 5) == 0


async def test_intents_the_store_holds_are_pruned_as_pods_are_created(engine: AsyncEngine) -> None:
    # Every creation reads the pending pods: the table must hold what is in flight, not every pod
    # ever created.
    a, b, c = _submitted("a"), _submitted("b"), _submitted("c")
    intents = AcceptedIntents(engine)
    await intents.record([OutgoingEvent(PODS, e) for e in (a, b, c)])
    await PostgresProjectionStore(engine).apply(GROUP, [_at(a, PODS, 0, 0), _at(b, PODS, 0, 1)])
    assert await intents.pending_pods() == {("default", "c")}
    async with engine.connect() as conn:
        kept = (await conn.execute(select(AcceptedIntent.__table__.c.event_id))).scalars().all()
    assert kept == [c.event_id]
