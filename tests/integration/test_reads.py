"""Reading back: a topic as `berth events` shows it, and the read model as the gateway queries it."""

from __future__ import annotations

import dataclasses
import uuid

import pytest
from aiokafka import AIOKafkaProducer
from sqlalchemy.ext.asyncio import AsyncEngine

from shared.adapters.kafka import KafkaPublisher, make_producer, read_topic
from shared.adapters.kafka.publisher import BATCHED_FROM
from shared.adapters.postgres import PostgresEventStore, ReadModelQueries
from shared.errors import DecodeError, RecordTooLarge, is_retriable
from shared.events import PODS, Envelope, OutgoingEvent, envelope, render_json
from tests.unit.events.samples import lifecycle

from .fixtures import BerthTestEnv
from .helpers import run_projector

pytestmark = pytest.mark.integration


async def test_read_topic_decodes_what_it_can(berth_env: BerthTestEnv, publisher: KafkaPublisher) -> None:
    pods = [p for p in lifecycle(n_pods=3) if berth_env.registry.topic_of(p) == PODS]
    await publisher.publish([OutgoingEvent(PODS, envelope(p, producer="t"), partition=0) for p in pods])
    await publisher.publish_raw(PODS, b"junk", partition=0)
    seen = [item async for item in read_topic(berth_env.settings, PODS, registry=berth_env.registry)]
    assert [pos.offset for pos, _, _ in seen] == list(range(len(pods) + 1))
    *good, (_, bad, raw) = seen
    assert all(isinstance(e, Envelope) for _, e, _ in good) and isinstance(bad, DecodeError) and raw == b"junk"
    assert '"type": "PodSubmitted"' in render_json(good[0][1])  # type: ignore[arg-type]  # asserted an Envelope above


async def test_read_model_queries(berth_env: BerthTestEnv, engine: AsyncEngine, publisher: KafkaPublisher) -> None:
    events = [OutgoingEvent(berth_env.registry.topic_of(p), envelope(p, producer="t")) for p in lifecycle(n_pods=8)]
    await publisher.publish(events)
    await run_projector(berth_env, engine, len(events))
    assert await PostgresEventStore(engine).count() == len(events)

    q = ReadModelQueries(engine)
    assert [n.name for n in await q.nodes()] == ["node-0", "node-1", "node-2"]
    assert (await q.node("node-0")) is not None and await q.node("node-3") is None
    live = await q.pods("default")
    assert "p-0" not in {p.name for p in live} and "p-1" not in {p.name for p in live}
    assert {p.name for p in await q.pods(include_deleted=True)} >= {"p-0", "p-1"}
    p3 = await q.pod("default", "p-3")
    assert p3 is not None and p3.phase == "Pending" and p3.nominated_node_name == "node-0"
    assert [a.attempt for a in await q.attempts(p3.uid)] == [1, 2]
    assert [b.state for b in await q.bindings(p3.uid)] == ["Rejected"]
    assert [v.uid for pre in await q.preemptions(p3.uid) for v in pre.victims] == ["uid-0"]
    assert (await q.pod_by_uid("uid-2")).phase == "Bound"  # type: ignore[union-attr]  # stored above

    store = PostgresEventStore(engine)
    created = await store.created_at([p3.uid, "no-such-uid"], ["PodSubmitted"])
    # Submitted once: its first submission is its latest (seqs order topics only within a batch).
    assert created == await store.versions([p3.uid], ["PodSubmitted"])
    ids = [e.envelope.event_id for e in events]
    missing = uuid.uuid4()
    assert await store.holding([*ids, missing]) == set(ids), "asked about in one query, however many"
    assert await store.holding([]) == set()


async def test_read_topic_reads_a_whole_batch(berth_env: BerthTestEnv, publisher: KafkaPublisher) -> None:
    # Published in one call, the events share a record batch; the reader must not stop at the
    # broker's ListOffsets answer, which for such a log can be short.
    pods = [p for p in lifecycle(n_pods=12) if berth_env.registry.topic_of(p) == PODS][:20]
    await publisher.publish([OutgoingEvent(PODS, envelope(p, producer="t"), partition=0) for p in pods])
    seen = [item async for item in read_topic(berth_env.settings, PODS, registry=berth_env.registry)]
    assert [pos.offset for pos, _, _ in seen] == list(range(len(pods)))


async def test_a_publish_keeps_each_partitions_order_across_batches(berth_env: BerthTestEnv) -> None:
    # Events of one call to two partitions, interleaved: one given more than a record batch holds
    # (sent as batches), the other a few (sent record by record).
    settings = dataclasses.replace(berth_env.settings, kafka_max_batch_bytes=1024)
    producer = make_producer(settings, client_id="test-small-batches")
    await producer.start()
    try:
        publisher = KafkaPublisher(producer, berth_env.registry)
        pods = [p for p in lifecycle(n_pods=12) if berth_env.registry.topic_of(p) == PODS]
        sent = [OutgoingEvent(PODS, envelope(p, producer="t"), partition=int(i % 10 == 0))
                for i, p in enumerate(pods * 4)]
        assert 1 < sum(e.partition == 1 for e in sent) < BATCHED_FROM
        await publisher.publish(sent)
    finally:
        await producer.stop()
    seen = [item async for item in read_topic(berth_env.settings, PODS, registry=berth_env.registry)]
    for partition in (0, 1):
        got = [(pos.offset, env.event_id) for pos, env, _ in seen if pos.partition == partition]  # type: ignore[union-attr]  # all decode
        want = [e.envelope.event_id for e in sent if e.partition == partition]
        assert got == list(enumerate(want))


async def test_a_record_above_the_limit_is_refused(berth_env: BerthTestEnv, producer: AIOKafkaProducer) -> None:
    publisher = KafkaPublisher(producer, berth_env.registry, max_record_bytes=64)
    pod = next(p for p in lifecycle(n_pods=1) if berth_env.registry.topic_of(p) == PODS)
    with pytest.raises(RecordTooLarge, match="PodSubmitted .* bytes, above 64") as refused:
        await publisher.publish([OutgoingEvent(PODS, envelope(pod, producer="t"), partition=0)])
    assert not is_retriable(refused.value), "the same record is refused again: the broker is not at fault"
