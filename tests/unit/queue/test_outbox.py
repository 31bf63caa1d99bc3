"""The queue's outbox: every decision goes out once, in the order made, whatever publish fails; an
event no record can hold is left out alone."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from services.queue.outbox import Outbox
from shared.errors import BrokerUnavailable, RecordTooLarge
from shared.events import DECISIONS, OutgoingEvent, SchedulerStarted, envelope


def _event(seed: int) -> OutgoingEvent:
    started = SchedulerStarted(config=None, config_hash="", seed=seed, batch_size=1)
    return OutgoingEvent(DECISIONS, envelope(started, producer="queue"))


def _seeds(events: Sequence[OutgoingEvent]) -> list[int]:
    return [e.envelope.payload.seed for e in events]  # type: ignore[union-attr]  # SchedulerStarted only


class _Broker:
    def __init__(self, *, down: int = 0, too_large: frozenset[int] = frozenset()) -> None:
        self.down, self.too_large = down, too_large
        self.published: list[OutgoingEvent] = []
        self.calls: list[list[int]] = []
        self.meanwhile: Callable[[], None] = lambda: None
        """Runs inside each publish, before it answers: a cycle deciding while the publish waits."""

    async def publish(self, events: Sequence[OutgoingEvent]) -> None:
        self.calls.append(_seeds(events))
        self.meanwhile()
        if self.down:
            self.down -= 1
            raise BrokerUnavailable("publishing: KafkaTimeoutError")
        if any(seed in self.too_large for seed in _seeds(events)):
            raise RecordTooLarge("a record of 2 MB is over the broker's 1 MB")
        self.published.extend(events)


def _never_left_out(event: OutgoingEvent, exc: RecordTooLarge) -> None:
    raise AssertionError(f"{event} left out: {exc}")


async def test_a_flush_publishes_every_event_once_in_one_call() -> None:
    broker, box = _Broker(), Outbox(_never_left_out)
    box.add(_event(1), _event(2))
    box.add(_event(3))
    assert box
    await box.flush(broker.publish)
    assert broker.calls == [[1, 2, 3]] and _seeds(broker.published) == [1, 2, 3]
    assert not box
    await box.flush(broker.publish)  # nothing held: no publish at all
    assert broker.calls == [[1, 2, 3]]


async def test_events_a_failed_publish_held_go_out_first_with_the_next() -> None:
    broker, box = _Broker(down=1), Outbox(_never_left_out)
    box.add(_event(1), _event(2))
    broker.meanwhile = lambda: box.add(_event(3)) if len(broker.calls) == 1 else None
    with pytest.raises(BrokerUnavailable):
        await box.flush(broker.publish)
    assert box and broker.published == []
    box.add(_event(4))
    await box.flush(broker.publish)
    assert broker.calls[-1] == [1, 2, 3, 4]  # in one publish, those held first
    assert _seeds(broker.published) == [1, 2, 3, 4]


async def test_an_event_no_record_holds_is_left_out_alone() -> None:
    left: list[tuple[int, str]] = []

    def left_out(event: OutgoingEvent, exc: RecordTooLarge) -> None:
        left.append((_seeds([event])[0], str(exc)))

    broker, box = _Broker(too_large=frozenset({2})), Outbox(left_out)
    box.add(_event(1), _event(2), _event(3))
    await box.flush(broker.publish)
    assert _seeds(broker.published) == [1, 3]
    assert left == [(2, "a record of 2 MB is over the broker's 1 MB")]
    assert not box


async def test_a_publish_failing_one_by_one_keeps_the_rest_in_order() -> None:
    left: list[int] = []
    broker = _Broker(too_large=frozenset({1}))
    box = Outbox(lambda event, exc: left.append(_seeds([event])[0]))
    box.add(_event(1), _event(2), _event(3))

    def meanwhile() -> None:
        if len(broker.calls) == 3:  # the batch refused, event 1 alone refused, then event 2: the broker is down
            broker.down = 1
            box.add(_event(9))  # decided while event 2's publish waited

    broker.meanwhile = meanwhile
    with pytest.raises(BrokerUnavailable):
        await box.flush(broker.publish)
    assert broker.published == [] and broker.calls == [[1, 2, 3], [1], [2]] and left == [1]
    box.add(_event(4))
    await box.flush(broker.publish)
    assert _seeds(broker.published) == [2, 3, 9, 4]
