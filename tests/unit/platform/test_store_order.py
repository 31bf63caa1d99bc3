"""The order the projector stores a batch in: partitions merged by time, each in offset order."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from shared.events import PodBound, PodDeleted, Position, ReceivedEvent, envelope
from shared.projection.order import in_time_order

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _at(topic: str, partition: int, offset: int, ms: int, uid: str) -> ReceivedEvent:
    payload: PodBound | PodDeleted = (PodBound(pod_uid=uid, node_name="n1", attempt_id="a") if topic == "placements"
                                      else PodDeleted(uid=uid, namespace="default", name=uid))
    env = envelope(payload, producer="t", timestamp=T0 + timedelta(milliseconds=ms))
    return ReceivedEvent(env, Position(topic, partition, offset))


def _names(events: list[ReceivedEvent]) -> list[tuple[str, int]]:
    return [(e.position.topic, e.position.offset) for e in events]


def test_a_placement_fetched_first_is_stored_after_the_earlier_events_of_other_partitions() -> None:
    # A fetch groups records by partition: here placements came first, though stamped later.
    batch = [_at("placements", 0, 7, 30, "a"), _at("placements", 0, 8, 40, "b"),
             _at("pods", 2, 3, 10, "a"), _at("pods", 2, 4, 35, "b")]
    assert _names(in_time_order(batch)) == [("pods", 3), ("placements", 7), ("pods", 4), ("placements", 8)]


def test_each_partition_keeps_its_offset_order_whatever_its_times() -> None:
    # Several producers write one partition: its times need not grow, its order still holds.
    batch = [_at("pods", 0, 1, 50, "a"), _at("pods", 0, 2, 20, "b"), _at("placements", 1, 5, 30, "c")]
    assert _names(in_time_order(batch)) == [("placements", 5), ("pods", 1), ("pods", 2)]


def test_one_partition_or_equal_times_leave_the_batch_as_fetched() -> None:
    one = [_at("pods", 0, 1, 50, "a"), _at("pods", 0, 2, 20, "b")]
    assert in_time_order(one) == one
    tied = [_at("placements", 0, 1, 10, "a"), _at("pods", 1, 1, 10, "a")]
    assert in_time_order(tied) == tied
