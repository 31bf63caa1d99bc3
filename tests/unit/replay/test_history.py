"""The history of a log read partition by partition: a preemption's decision and its request sit on
different partitions, so the decision may come first; it still belongs to its request."""

from __future__ import annotations

from shared.events import PREEMPTION, PodRef, PreemptionDecided, PreemptionRequested, envelope
from shared.events.catalogue import REQUESTS_PARTITION
from shared.events.envelope import Position, ReceivedEvent
from shared.replay.history import History

from ..events.samples import make_pod


def _at(payload: object, partition: int, offset: int) -> ReceivedEvent:
    return ReceivedEvent(envelope(payload, producer="t"), Position(PREEMPTION, partition, offset))  # type: ignore[arg-type]


def test_a_decision_read_before_its_request_is_kept() -> None:
    request = PreemptionRequested(pod=make_pod(uid="uid-web-0"), attempt_id="uid-web-0/1")
    decided = PreemptionDecided(preemptor_uid="uid-web-0", nominated_node="node-a", attempt_id="uid-web-0/1",
                                victims=[PodRef(uid="uid-low")])
    for events in ([_at(decided, 3, 0), _at(request, REQUESTS_PARTITION, 0)],
                   [_at(request, REQUESTS_PARTITION, 0), _at(decided, 3, 0)]):
        record = History(events).preemptions["uid-web-0/1"]
        assert record.request == request and record.decided == decided
