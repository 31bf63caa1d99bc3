"""The history of a log read partition by partition: a preemption's decision and its request sit on
different topics, so the decision may come first; it still belongs to its request."""

from __future__ import annotations

from shared.events import (
    FILTER_REQUESTS,
    PREEMPTION,
    PREEMPTION_REQUESTS,
    SHARD_RESULTS,
    AnyEvent,
    FilterBatchRequested,
    PodRef,
    PreemptionDecided,
    PreemptionRequested,
    ShardFiltered,
    envelope,
)
from shared.events.envelope import Position, ReceivedEvent
from shared.replay.history import History

from ..events.samples import make_pod


def _at(payload: AnyEvent, partition: int, offset: int, topic: str = PREEMPTION) -> ReceivedEvent:
    return ReceivedEvent(envelope(payload, producer="t"), Position(topic, partition, offset))


def test_a_decision_read_before_its_request_is_kept() -> None:
    request = PreemptionRequested(pod=make_pod(uid="uid-web-0"), attempt_id="uid-web-0/1")
    decided = PreemptionDecided(preemptor_uid="uid-web-0", nominated_node="node-a", attempt_id="uid-web-0/1",
                                victims=[PodRef(uid="uid-low")])
    for events in ([_at(decided, 3, 0), _at(request, 0, 0, PREEMPTION_REQUESTS)],
                   [_at(request, 0, 0, PREEMPTION_REQUESTS), _at(decided, 3, 0)]):
        record = History(events).preemptions["uid-web-0/1"]
        assert record.request == request and record.decided == decided


def test_a_batch_is_proposed_as_the_answer_the_queue_read_first_says() -> None:
    """A request sent again to a second worker has two answers; the queue keeps the one first on
    their partition, whatever their timestamps (a history from Kafka or an export is in timestamp
    order)."""
    request = FilterBatchRequested(batch_id="b1", cycle=1, phase="filter", pods=[make_pod(uid="uid-web-0")],
                                   whole=True, propose=True, seeds=[7])
    walks = ShardFiltered(batch_id="b1", cycle=1, shard=0, phase="filter", node_count=1)
    proposals = ShardFiltered(batch_id="b1", cycle=1, shard=0, phase="filter", node_count=1, proposed=True)
    asked = ReceivedEvent(envelope(request, producer="queue"), Position(FILTER_REQUESTS, 0, 0))
    read_second = ReceivedEvent(envelope(walks, producer="filter-0"), Position(SHARD_RESULTS, 2, 5))
    read_first = ReceivedEvent(envelope(proposals, producer="filter-1"), Position(SHARD_RESULTS, 2, 4))
    for events in ([asked, read_second, read_first], [asked, read_first, read_second]):
        batch = History(events).batches["b1"]
        assert batch.proposed and [a.proposed for a in batch.answers] == [True, False]


def test_requests_replay_in_the_order_of_their_offsets() -> None:
    """The service decides requests in the order of their one partition; an earlier build's, on
    `preemption`, in the order of their watermarks, before them."""
    def request(uid: str, reach: int) -> PreemptionRequested:
        return PreemptionRequested(pod=make_pod(uid=uid), attempt_id=f"{uid}/1", watermark={"pods": [reach]})
    events = [_at(request("late", 1), 0, 5, PREEMPTION_REQUESTS), _at(request("early", 9), 0, 2, PREEMPTION_REQUESTS),
              _at(request("old-b", 7), 0, 1), _at(request("old-a", 3), 0, 0)]
    assert [r.request.pod.metadata.uid for r in History(events).ordered_preemptions()] == [
        "old-a", "old-b", "early", "late"]
