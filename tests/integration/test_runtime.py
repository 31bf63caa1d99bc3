"""The service runtime against the real broker: dead letters, retries, rebalance hooks, endpoints."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
from collections.abc import Callable, Sequence

import aiohttp
import msgspec
import pytest

from services.runtime import Handler, Rest, RetryPolicy, Service, ServiceConfig
from services.runtime.loop import DEAD_LETTER_KEY_BYTES, DEAD_LETTER_RAW_BYTES
from services.runtime.service import RebalanceFailed
from shared.adapters.kafka import KafkaPublisher
from shared.errors import DatabaseUnavailable, InvalidInput
from shared.events import (
    DECISIONS,
    PODS,
    DeadLettered,
    NodeUpserted,
    OutgoingEvent,
    PodSubmitted,
    ReceivedEvent,
    SchedulingAttempted,
    derived_id,
    encode,
    envelope,
)
from shared.ports import TopicPartition
from tests.unit.events.samples import make_node, make_pod

from .fixtures import BerthTestEnv
from .helpers import Watched, eventually, read_events

pytestmark = pytest.mark.integration


class Decider(Handler):
    """Answers every PodSubmitted with a SchedulingAttempted; fails on request to exercise retries."""

    def __init__(self, *, flaky: dict[str, int] | None = None, invalid: set[str] | None = None) -> None:
        self.flaky = dict(flaky or {})
        self.invalid = invalid or set()

    async def handle(self, event: ReceivedEvent) -> Sequence[OutgoingEvent]:
        payload = event.payload
        assert isinstance(payload, PodSubmitted)
        name = payload.pod.metadata.name
        if self.flaky.get(name, 0) > 0:
            self.flaky[name] -= 1
            raise DatabaseUnavailable("connection reset")
        if name in self.invalid:
            raise InvalidInput(f"Pod default/{name}", "spec.priority", "expected an integer")
        out = SchedulingAttempted(pod_uid=payload.pod.metadata.uid, attempt=1, profile="default-scheduler",
                                  node_name="node-a", message=None, seed=1, config_hash="h")
        env = envelope(out, producer="decider", caused_by=event.envelope,
                       event_id=derived_id(event.envelope.event_id, "attempt", 1))
        return [OutgoingEvent(DECISIONS, env)]


def _service(env: BerthTestEnv, handler: Handler, *, name: str = "decider", topics: Sequence[str] = (PODS,),
             serve_http: bool = False, group: str | None = None) -> Service:
    config = ServiceConfig(name=name, group_id=group or f"berth-{name}", topics=topics, serve_http=serve_http,
                           retry=RetryPolicy(initial=0.01, maximum=0.05))
    return Service(env.settings.for_service(name), config, handler, registry=env.registry)


def _pod_event(name: str) -> OutgoingEvent:
    return OutgoingEvent(PODS, envelope(PodSubmitted(pod=make_pod(name)), producer="test"), partition=0)


async def test_malformed_message_is_dead_lettered_and_the_next_is_processed(
    berth_env: BerthTestEnv, publisher: KafkaPublisher
) -> None:
    wrong_topic = encode(envelope(NodeUpserted(node=make_node()), producer="test"))
    await publisher.publish_raw(PODS, b"\xc1 not msgpack", key=b"uid-x", partition=0)
    await publisher.publish_raw(PODS, wrong_topic, key=b"uid-y", partition=0)
    await publisher.publish([_pod_event("good")])

    watched = Watched(Decider())
    service = _service(berth_env, watched, serve_http=True)
    task = asyncio.create_task(service.run())
    try:
        await watched.wait_handled(1)
        dead = await read_events(berth_env.settings, berth_env.registry, "dead-letters", count=2)
        decisions = await read_events(berth_env.settings, berth_env.registry, DECISIONS, count=1)
        assert service.http is not None
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{service.http.url}/healthz") as response:
                assert response.status == 200 and (await response.json())["service"] == "decider"
            async with http.get(f"{service.http.url}/metrics") as response:
                metrics = await response.text()
    finally:
        service.request_stop()
        await asyncio.wait_for(task, 10)

    assert [e.payload.pod.metadata.name for e in watched.handled] == ["good"]  # type: ignore[union-attr]  # only pods get through
    letters = sorted((e.payload for e in dead if isinstance(e.payload, DeadLettered)), key=lambda d: d.offset)
    assert len(letters) == len(dead)
    assert [(d.origin_topic, d.partition, d.offset) for d in letters] == [(PODS, 0, 0), (PODS, 0, 1)]
    assert base64.b64decode(letters[0].raw) == b"\xc1 not msgpack" and letters[0].key == "uid-x"
    assert "undecodable" in letters[0].reason and "does not belong" in letters[1].reason
    assert decisions[0].envelope.causation_id == watched.handled[0].envelope.event_id
    assert 'berth_events_dead_lettered_total{cause="decode",service="decider",topic="pods"} 2.0' in metrics
    assert 'berth_consumer_lag{partition="0",service="decider",topic="pods"} 0.0' in metrics


async def test_retriable_errors_are_retried_and_invalid_events_dead_lettered(
    berth_env: BerthTestEnv, publisher: KafkaPublisher
) -> None:
    await publisher.publish([_pod_event("flaky"), _pod_event("invalid"), _pod_event("fine")])
    handler = Decider(flaky={"flaky": 2}, invalid={"invalid"})
    service = _service(berth_env, handler)
    task = asyncio.create_task(service.run())
    try:
        dead = await read_events(berth_env.settings, berth_env.registry, "dead-letters", count=1)
        decisions = await read_events(berth_env.settings, berth_env.registry, DECISIONS, count=2)
    finally:
        service.request_stop()
        await asyncio.wait_for(task, 10)
    letter = dead[0].payload
    assert isinstance(letter, DeadLettered) and letter.offset == 1
    assert letter.reason == "InvalidInput: Pod default/invalid: spec.priority: expected an integer"
    decided = {msgspec.structs.asdict(d.payload)["pod_uid"] for d in decisions}
    assert decided == {"uid-flaky", "uid-fine"}
    assert handler.flaky["flaky"] == 0
    retries = service.metrics.retries.labels("decider", "handle")._value.get()
    assert retries >= 2


async def test_a_message_too_large_to_carry_whole_is_dead_lettered_in_part(
    berth_env: BerthTestEnv, publisher: KafkaPublisher
) -> None:
    # 1.5 MiB of garbage: whole, its dead letter (base64, a third larger) would exceed the 1 MiB
    # records this service may publish, and the letter would be retried for good.
    garbage = b"\xc1" + bytes(range(256)) * (6 << 10)
    key = b"\xff" * (1 << 20)  # not UTF-8: each byte is read as U+FFFD, three bytes
    await publisher.publish_raw(PODS, garbage, key=key, partition=0)
    await publisher.publish([_pod_event("after")])
    watched = Watched(Decider())
    config = ServiceConfig(name="decider", group_id="berth-decider", topics=(PODS,), serve_http=False,
                           retry=RetryPolicy(initial=0.01, maximum=0.05))
    settings = dataclasses.replace(berth_env.settings.for_service("decider"), kafka_max_message_bytes=1 << 20)
    service = Service(settings, config, watched, registry=berth_env.registry)
    task = asyncio.create_task(service.run())
    try:
        await watched.wait_handled(1)
        [dead] = await read_events(berth_env.settings, berth_env.registry, "dead-letters", count=1)
    finally:
        service.request_stop()
        await asyncio.wait_for(task, 10)
    letter = dead.payload
    assert isinstance(letter, DeadLettered) and (letter.offset, letter.key) == (0, "\ufffd" * DEAD_LETTER_KEY_BYTES)
    assert base64.b64decode(letter.raw) == garbage[:DEAD_LETTER_RAW_BYTES]
    assert letter.reason.endswith(f"(the message is {len(garbage)} bytes; its first {DEAD_LETTER_RAW_BYTES} "
                                  "are kept here)")


class Verbose(Decider):
    """Answers the pod named "verbose" with a decision too large for any record."""

    async def handle(self, event: ReceivedEvent) -> Sequence[OutgoingEvent]:
        [out] = await super().handle(event)
        payload = event.payload
        assert isinstance(payload, PodSubmitted) and isinstance(out.envelope.payload, SchedulingAttempted)
        if payload.pod.metadata.name != "verbose":
            return [out]
        huge = msgspec.structs.replace(out.envelope.payload, message="x" * (2 << 20))
        return [OutgoingEvent(DECISIONS, msgspec.structs.replace(out.envelope, payload=huge))]


async def test_an_input_whose_output_no_record_can_hold_is_dead_lettered(
    berth_env: BerthTestEnv, publisher: KafkaPublisher
) -> None:
    await publisher.publish([_pod_event("before"), _pod_event("verbose"), _pod_event("after")])
    config = ServiceConfig(name="decider", group_id="berth-decider", topics=(PODS,), serve_http=False,
                           retry=RetryPolicy(initial=0.01, maximum=0.05))
    settings = dataclasses.replace(berth_env.settings.for_service("decider"), kafka_max_message_bytes=1 << 20)
    service = Service(settings, config, Verbose(), registry=berth_env.registry)
    task = asyncio.create_task(service.run())
    try:
        decisions = await read_events(berth_env.settings, berth_env.registry, DECISIONS, count=2)
        [dead] = await read_events(berth_env.settings, berth_env.registry, "dead-letters", count=1)
    finally:
        service.request_stop()
        await asyncio.wait_for(task, 10)
    assert sorted(msgspec.structs.asdict(d.payload)["pod_uid"] for d in decisions) == ["uid-after", "uid-before"]
    letter = dead.payload
    assert isinstance(letter, DeadLettered) and (letter.offset, letter.key) == (1, "uid-verbose")
    assert letter.reason.startswith("its output cannot be published: ")


class Stumbling(Decider):
    """Fails with a retriable error three times, then once with an unexpected one, then handles."""

    def __init__(self) -> None:
        super().__init__()
        self.failures: list[Exception] = [RuntimeError("a bug that passes"), *[DatabaseUnavailable("reset")] * 3]

    async def handle(self, event: ReceivedEvent) -> Sequence[OutgoingEvent]:
        if self.failures:
            raise self.failures.pop()
        return await super().handle(event)


async def test_retriable_failures_do_not_use_up_the_tries_of_an_unexpected_one(
    berth_env: BerthTestEnv, publisher: KafkaPublisher
) -> None:
    await publisher.publish([_pod_event("stumbled")])
    handler = Stumbling()
    service = _service(berth_env, handler)
    task = asyncio.create_task(service.run())
    try:
        [decided] = await read_events(berth_env.settings, berth_env.registry, DECISIONS, count=1)
    finally:
        service.request_stop()
        await asyncio.wait_for(task, 10)
    assert msgspec.structs.asdict(decided.payload)["pod_uid"] == "uid-stumbled"
    assert not handler.failures


class Unpositioned(Decider):
    """A handler whose own positions cannot be read (its store refuses, for a reason not retried)."""

    async def positions(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, int]:
        raise InvalidInput("consumer_offsets", "offset", "expected an integer")


async def test_a_failed_assignment_stops_the_service_before_it_consumes(
    berth_env: BerthTestEnv, publisher: KafkaPublisher
) -> None:
    await publisher.publish([_pod_event("early")])
    watched = Watched(Unpositioned())
    service = _service(berth_env, watched)
    with pytest.raises(RebalanceFailed, match="decider: consumer_offsets: offset: expected an integer"):
        await asyncio.wait_for(service.run(), 20)
    assert watched.handled == []


class Recorder(Handler):
    def __init__(self) -> None:
        self.owned: list[TopicPartition] = []
        self.changed = asyncio.Event()

    async def handle(self, event: ReceivedEvent) -> Sequence[OutgoingEvent]:
        return []

    async def on_assigned(self, partitions: Sequence[TopicPartition]) -> None:
        self.owned = list(partitions)
        self.changed.set()

    async def on_revoked(self, partitions: Sequence[TopicPartition]) -> None:
        self.owned = []

    async def wait_owning(self, count: int, timeout: float = 15.0) -> None:
        async def wait() -> None:
            while len(self.owned) != count:
                self.changed.clear()
                await self.changed.wait()

        await asyncio.wait_for(wait(), timeout)


async def test_rebalance_hooks_split_co_partitioned_shards(berth_env: BerthTestEnv) -> None:
    topics = ("nodes", "placements")
    first, second = Recorder(), Recorder()
    one = _service(berth_env, first, name="filter-a", topics=topics, group="berth-filter")
    two = _service(berth_env, second, name="filter-b", topics=topics, group="berth-filter")
    every = sum(berth_env.registry.spec(t).partitions for t in topics)
    tasks = [asyncio.create_task(one.run())]
    try:
        await first.wait_owning(every)
        tasks.append(asyncio.create_task(two.run()))
        await asyncio.gather(first.wait_owning(every // 2), second.wait_owning(every // 2))
        for rec in (first, second):
            shards = {p for t, p in rec.owned if t == "nodes"}
            assert shards == {p for t, p in rec.owned if t == "placements"}, "same shard numbers in both topics"
        assert not {p for _, p in first.owned} & {p for _, p in second.owned}
        two.request_stop()
        await asyncio.wait_for(tasks.pop(), 10)
        await first.wait_owning(every)
    finally:
        for service in (one, two):
            service.request_stop()
        await asyncio.wait_for(asyncio.gather(*tasks), 10)


class Ticker(Handler):
    """Publishes one decision from its timer, and fails on the second tick (which must not stop it)."""

    def __init__(self) -> None:
        self.ticks = 0
        self.kept_ticking = asyncio.Event()

    async def handle(self, event: ReceivedEvent) -> Sequence[OutgoingEvent]:
        return []

    async def tick(self) -> Sequence[OutgoingEvent]:
        self.ticks += 1
        if self.ticks >= 3:
            self.kept_ticking.set()
        if self.ticks == 2:
            raise RuntimeError("timer bug")
        if self.ticks > 1:
            return []
        out = SchedulingAttempted(pod_uid="uid-t", attempt=1, profile="p", node_name=None, message="backoff",
                                  seed=0, config_hash="h")
        return [OutgoingEvent(DECISIONS, envelope(out, producer="ticker"))]


async def test_tick_publishes_time_driven_events(berth_env: BerthTestEnv) -> None:
    ticker = Ticker()
    service = _service(berth_env, ticker, name="ticker")
    service.config.tick_interval_s = 0.01
    task = asyncio.create_task(service.run())
    try:
        (decision,) = await read_events(berth_env.settings, berth_env.registry, DECISIONS, count=1)
        assert decision.envelope.producer == "ticker"
        await asyncio.wait_for(ticker.kept_ticking.wait(), 5)
    finally:
        service.request_stop()
        await asyncio.wait_for(task, 10)


def _rests(service: Service) -> float:
    return service.metrics.registry.get_sample_value("berth_rests_total", {"service": service.config.name}) or 0.0


async def _until(condition: Callable[[], bool], timeout_s: float) -> None:
    """`eventually`, for a condition on this process's own state."""
    async def check() -> bool:
        return condition()

    await eventually(check, timeout_s, interval=0.02)


async def test_a_resting_consumer_handles_every_record_sent_while_it_rests(
    berth_env: BerthTestEnv, publisher: KafkaPublisher
) -> None:
    watched = Watched(Decider())
    service = _service(berth_env, watched, name="rester")
    service.config.rest = Rest(after_s=1.2, pace_s=0.6, first_after_s=0.2)
    task = asyncio.create_task(service.run())
    try:
        await asyncio.wait_for(service.ready.wait(), 30)
        await _until(lambda: _rests(service) >= 2, 10)  # nothing came since it started: it rests soon
        await _until(lambda: bool(service._consumer and service._consumer.paused()), 5)
        await publisher.publish([_pod_event(f"sent-resting-{i}") for i in range(3)])
        await watched.wait_handled(3)
        awake = _rests(service)
        await asyncio.sleep(0.9)  # records came: it rests only after `after_s` without any
        assert _rests(service) == awake
        await _until(lambda: _rests(service) >= awake + 2, 10)  # and rests again once they stop
    finally:
        service.request_stop()
        await asyncio.wait_for(task, 10)

    names = [e.payload.pod.metadata.name for e in watched.handled if isinstance(e.payload, PodSubmitted)]
    assert names == [f"sent-resting-{i}" for i in range(3)] and len(watched.handled) == 3


async def test_resting_members_of_a_group_that_rebalances_lose_no_record(
    berth_env: BerthTestEnv, publisher: KafkaPublisher
) -> None:
    """A member joins, and later leaves, while the other rests: the partitions move between resting
    consumers, and each record sent after the moves is handled once, by one of them."""
    partitions = berth_env.registry.spec(PODS).partitions
    first, second = Watched(Decider()), Watched(Decider())
    one = _service(berth_env, first, name="rest-a", group="berth-resting")
    two = _service(berth_env, second, name="rest-b", group="berth-resting")
    for service in (one, two):
        service.config.rest = Rest(after_s=0.5, pace_s=0.6, first_after_s=0.2)

    def owning(*services: Service) -> Callable[[], bool]:
        def whole() -> bool:
            owned = [p for s in services for _, p in s.assignment]
            return sorted(owned) == list(range(partitions)) and all(s.assignment for s in services)
        return whole

    async def send(prefix: str) -> list[str]:
        names = [f"{prefix}-{k}" for k in range(partitions * 2)]
        await publisher.publish([OutgoingEvent(PODS, envelope(PodSubmitted(pod=make_pod(n)), producer="test"),
                                               partition=k % partitions) for k, n in enumerate(names)])
        return names

    def handled() -> list[str]:
        return sorted(e.payload.pod.metadata.name for w in (first, second) for e in w.handled
                      if isinstance(e.payload, PodSubmitted))

    tasks = [asyncio.create_task(one.run())]
    try:
        await _until(lambda: _rests(one) >= 1, 30)  # resting when the second joins
        tasks.append(asyncio.create_task(two.run()))
        await _until(owning(one, two), 30)
        await _until(lambda: _rests(one) >= 2 and _rests(two) >= 1, 10)
        both = await send("both")
        await _until(lambda: len(handled()) >= len(both), 15)
        assert first.handled and second.handled  # each handled its own partitions' records
        two.request_stop()
        await asyncio.wait_for(tasks.pop(), 10)
        await _until(owning(one), 30)
        alone = await send("alone")
        await _until(lambda: len(handled()) >= len(both) + len(alone), 15)
        await asyncio.sleep(1.5)  # past a rest and a look: anything handled twice would show
    finally:
        for service in (one, two):
            service.request_stop()
        await asyncio.wait_for(asyncio.gather(*tasks), 10)

    assert handled() == sorted(both + alone)
