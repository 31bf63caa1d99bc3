from __future__ import annotations

from datetime import UTC, datetime

import pytest

from shared.errors import GapRecord
from shared.events import (
    GAP,
    AnyEvent,
    BindRejected,
    BindRequested,
    Envelope,
    LateBatchDecided,
    PodBound,
    PodNominated,
    PodSubmitted,
    Position,
    PreemptionDecided,
    PreemptionRequested,
    ReceivedEvent,
    SchedulingAttempted,
    decode,
    envelope,
)
from shared.events.restoration import causally_complete, partition_logs, referenced_ends
from tests.builders import MakePod

NOW = datetime(2026, 11, 26, tzinfo=UTC)


def _env(payload: AnyEvent, caused_by: Envelope | None = None) -> Envelope:
    return envelope(payload, producer="t", timestamp=NOW, caused_by=caused_by)


def _at(env: Envelope, topic: str = "pods", partition: int = 0, offset: int = 0) -> ReceivedEvent:
    return ReceivedEvent(env, Position(topic, partition, offset))


def _submitted(uid: str) -> Envelope:
    return _env(PodSubmitted(pod=MakePod().name(uid).uid(uid).obj()))


def _request(sub: Envelope) -> Envelope:
    assert isinstance(sub.payload, PodSubmitted)
    pod = sub.payload.pod
    return _env(BindRequested(pod_uid=pod.metadata.uid or "", pod=pod, node_name="n1", attempt_id="a", seed=0))


def test_events_whose_ground_was_lost_are_dropped() -> None:
    a = _submitted("a")
    request_a = _request(a)
    request_b = _request(_submitted("b"))  # b's submission was never stored
    bound_a = _env(PodBound(pod_uid="a", node_name="n1", attempt_id="a"), caused_by=request_a)
    orphan = _env(PodBound(pod_uid="a", node_name="n2", attempt_id="x"), caused_by=_request(a))  # request lost
    rejected_b = _env(BindRejected(pod_uid="b", node_name="n1", attempt_id="a", reason="r"), caused_by=request_b)
    tried_b = _env(SchedulingAttempted(pod_uid="b", attempt=1, profile="default-scheduler", batch_id="x", seed=0,
                                       config_hash="h", node_name="n1", message=None))
    nominated_a = _env(PodNominated(uid="a", node_name="n1"))
    events = [_at(e) for e in (a, request_a, request_b, bound_a, orphan, rejected_b, tried_b, nominated_a)]

    kept, dropped = causally_complete(events)

    assert [e.envelope for e in kept] == [a, request_a, bound_a, nominated_a]
    assert [e.envelope for e in dropped] == [request_b, orphan, rejected_b, tried_b]


def test_partitions_are_filled_to_their_furthest_end() -> None:
    a, b = _submitted("a"), _submitted("b")
    logs = partition_logs([_at(a, offset=0), _at(b, offset=2), _at(a, "pods", 1, 1)],
                          {("pods", 0): 5, ("pods", 1): 1, ("nodes", 2): 2, ("nodes", 3): 0})
    assert logs == {("pods", 0): [a, None, b, None, None], ("pods", 1): [None, a], ("nodes", 2): [None, None]}


def test_a_gap_filler_is_not_an_event() -> None:
    with pytest.raises(GapRecord):
        decode(GAP, topic="pods")


def test_partitions_run_to_every_position_a_stored_event_names() -> None:
    # Records past the last stored one were lost with the broker: the next ones written must not
    # take the offsets that stored watermarks and request offsets name.
    request = _env(PreemptionRequested(pod=MakePod().name("p").uid("p").obj(), attempt_id="p/1",
                                       watermark={"pods": [3, 0], "placements": [7]}))
    late = _env(LateBatchDecided(batch_id="b", watermark={"pods": [5, 1]}))
    decided = _env(PreemptionDecided(preemptor_uid="p", nominated_node="n1", attempt_id="p/1", request_at=8,
                                     folded={"nodes": [4]}, in_flight=[2, 3, 11, 2]))
    nominated = _env(PodNominated(uid="p", node_name="n1", request_at=9))
    ends = referenced_ends([_at(request, "preemption-requests"), _at(late, "decisions"),
                            _at(decided, "preemption"), _at(nominated)])
    assert ends == {("pods", 0): 5, ("pods", 1): 1, ("placements", 0): 7, ("nodes", 0): 4,
                    ("preemption-requests", 0): 13}
