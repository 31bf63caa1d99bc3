"""The preemption service's handler: requests whose watermark predates the service's own recent
decisions are decided with those decisions overlaid, so no victim frees room twice."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec
import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram

from services.preemption.handlers import BEHIND_WAIT_S, PreemptionHandler, PreemptionMetrics
from services.runtime.scheduler_config import profiles_from
from shared.cluster import ClusterView
from shared.events import (
    PREEMPTION_REQUESTS,
    NodeFailure,
    NodeUpserted,
    OutgoingEvent,
    PodBound,
    PodDeleted,
    PodEvicted,
    PodNominated,
    PodRef,
    PodSubmitted,
    Position,
    PreemptionDecided,
    PreemptionRequested,
    ReceivedEvent,
    envelope,
)
from shared.protocol.preemption_in_flight import recorded_overlay
from shared.protocol.preemption_request import folded_past
from shared.replay.history import History
from tests.unit.events.samples import make_node, running
from tests.unit.preemption.support import make_pod

FULL = [NodeFailure(code="Unschedulable", reasons=["Insufficient cpu"], plugin="NodeResourcesFit", nodes=["node-a"])]


async def _reached(watermark: Mapping[str, list[int]], timeout: float) -> bool:
    return True


def _cluster() -> ClusterView:
    """One 2-cpu node running two 1-cpu pods of priority 0."""
    view = ClusterView()
    view.apply(envelope(NodeUpserted(node=make_node("node-a", cpu="2")), producer="t"))
    for name in ("low-a", "low-b"):
        for env in running(make_pod(name, cpu="1", priority=0, node_name="node-a")):
            view.apply(env)
    return view


def _handler(view: ClusterView) -> PreemptionHandler:
    return PreemptionHandler(view, profiles_from(None), _reached, PreemptionMetrics(CollectorRegistry()))


def _request(name: str, at: int = 0) -> ReceivedEvent:
    """The request at offset `at` of `preemption-requests`."""
    req = PreemptionRequested(pod=make_pod(name, cpu="1", priority=100), node_statuses=FULL,
                              attempt_id=f"uid-{name}/1", seed=1)
    return ReceivedEvent(envelope(req, producer="queue"), Position(PREEMPTION_REQUESTS, 0, at))


def _decided(out: Sequence[OutgoingEvent]) -> PreemptionDecided:
    decided = [o.envelope.payload for o in out if isinstance(o.envelope.payload, PreemptionDecided)]
    assert len(decided) == 1
    return decided[0]


def _sample(metric: Counter | Histogram, name: str) -> float:
    return next(s.value for family in metric.collect() for s in family.samples if s.name == name)


def _fold(view: ClusterView, handler: PreemptionHandler, out: Sequence[OutgoingEvent]) -> None:
    for o in out:
        view.apply(o.envelope)
        handler.on_event(o.envelope)


async def test_a_second_request_on_a_stale_watermark_does_not_reuse_the_first_victim() -> None:
    view = _cluster()
    handler = _handler(view)
    view.apply(envelope(PodSubmitted(pod=make_pod("hi-1", cpu="1", priority=100)), producer="t"))
    view.apply(envelope(PodSubmitted(pod=make_pod("hi-2", cpu="1", priority=100)), producer="t"))

    first = await handler.handle(_request("hi-1", 7))
    one = _decided(first)
    assert one.nominated_node == "node-a" and len(one.victims) == 1
    assert one.request_at == 7 and one.in_flight == [] and one.evicting == [] and one.nominating == {}

    # The view has not folded the first decision's evictions and nomination (the queue asked for
    # the second before they reached it): they are overlaid, so the other pod is the victim. The
    # decision names the first by its request's offset, which replay reads the overlay back from.
    second = await handler.handle(_request("hi-2", 8))
    two = _decided(second)
    assert two.nominated_node == "node-a"
    assert [v.uid for v in two.victims] != [v.uid for v in one.victims] and len(two.victims) == 1
    assert two.in_flight == [7, 1] and two.evicting == [] and two.nominating == {}
    assert recorded_overlay(two, {7: one}) == ([one.victims[0].uid], {"uid-hi-1": "node-a"})
    evicted = [o.envelope.payload.uid for o in [*first, *second] if isinstance(o.envelope.payload, PodEvicted)]
    assert sorted(evicted) == ["uid-low-a", "uid-low-b"]

    # Once the view shows both decisions, nothing is in flight any more.
    _fold(view, handler, [*first, *second])
    handler.overlay()
    assert handler.in_flight == {} and view.evicting == set() and view.nominating == {}


async def test_in_flight_decisions_are_rebuilt_from_the_log_after_a_restart() -> None:
    view = _cluster()
    handler = _handler(view)
    view.apply(envelope(PodSubmitted(pod=make_pod("hi-1", cpu="1", priority=100)), producer="t"))
    first = await handler.handle(_request("hi-1", 3))

    # A fresh process reads its past decision back before the evictions it published.
    restarted_view = _cluster()
    restarted_view.apply(envelope(PodSubmitted(pod=make_pod("hi-1", cpu="1", priority=100)), producer="t"))
    restarted_view.apply(envelope(PodSubmitted(pod=make_pod("hi-2", cpu="1", priority=100)), producer="t"))
    restarted = _handler(restarted_view)
    for o in first:
        if isinstance(o.envelope.payload, PreemptionDecided):
            restarted.on_event(o.envelope)
    assert list(restarted.in_flight) == ["uid-hi-1/1"]
    again = await restarted.handle(_request("hi-1", 3))
    assert again == []  # answered already
    two = _decided(await restarted.handle(_request("hi-2", 4)))
    assert two.in_flight == [3, 1]  # named by the offset the decision read back records
    assert recorded_overlay(two, {3: _decided(first)}) == ([_decided(first).victims[0].uid], {"uid-hi-1": "node-a"})
    assert [v.uid for v in two.victims] != [v.uid for v in _decided(first).victims]

    nominations = [o for o in first if isinstance(o.envelope.payload, PodNominated)]
    assert nominations and all(o.envelope.causation_id is not None for o in nominations)


async def test_a_request_whose_pod_fits_once_in_flight_evictions_land_evicts_nobody_and_nominates() -> None:
    # A 4-cpu node running one 3-cpu pod of priority 0: two 1-cpu preemptors failed in one cycle.
    view = ClusterView()
    view.apply(envelope(NodeUpserted(node=make_node("node-a", cpu="4")), producer="t"))
    for pod in (make_pod("big", cpu="3", priority=0, node_name="node-a"),
                make_pod("filler", cpu="1", priority=200, node_name="node-a")):
        for env in running(pod):
            view.apply(env)
    handler = _handler(view)
    for name in ("hi-1", "hi-2"):
        view.apply(envelope(PodSubmitted(pod=make_pod(name, cpu="1", priority=100)), producer="t"))

    one = _decided(await handler.handle(_request("hi-1", 0)))
    assert one.nominated_node == "node-a" and [v.uid for v in one.victims] == ["uid-big"]

    # The first eviction frees 3 cpus and the first preemptor is to take 1 of them: the second
    # preemptor fits beside it, so nobody more is evicted: it is nominated there (as upstream
    # nominates a candidate needing no victims) and retried.
    second = await handler.handle(_request("hi-2", 1))
    two = _decided(second)
    assert two.nominated_node == "node-a" and two.victims == []
    assert recorded_overlay(two, {0: one}) == (["uid-big"], {"uid-hi-1": "node-a"})
    assert two.message == 'preemption: not needed, the pod fits on node "node-a" now'
    assert two.fits == "node-a"
    effects = [o.envelope.payload for o in second if isinstance(o.envelope.payload, (PodEvicted, PodNominated))]
    assert effects == [PodNominated(uid="uid-hi-2", node_name="node-a", request_at=1)]
    # Counted as upstream counts a candidate needing no victims: an attempt, with 0 victims.
    metrics = handler.metrics
    assert _sample(metrics.attempts, "scheduler_preemption_attempts_total") == 2
    assert _sample(metrics.victims, "scheduler_preemption_victims_count") == 2
    assert _sample(metrics.victims, "scheduler_preemption_victims_sum") == 1


async def test_a_request_decided_on_its_own_view_tries_preemption_as_upstream() -> None:
    # Nothing in flight and no events past the watermark: the pod did not fit, preemption runs.
    view = _cluster()
    handler = _handler(view)
    view.apply(envelope(PodSubmitted(pod=make_pod("hi-1", cpu="1", priority=100)), producer="t"))
    one = _decided(await handler.handle(_request("hi-1")))
    assert one.nominated_node == "node-a" and len(one.victims) == 1


async def test_a_request_for_a_pod_bound_meanwhile_evicts_nobody() -> None:
    # The pod was placed by a later attempt before this request was decided (the service had a
    # backlog): nobody is evicted for it, whatever room the cluster has.
    view = _cluster()
    view.apply(envelope(NodeUpserted(node=make_node("node-b", cpu="1")), producer="t"))
    handler = _handler(view)
    view.apply(envelope(PodSubmitted(pod=make_pod("hi-1", cpu="1", priority=100)), producer="t"))
    view.apply(envelope(PodBound(pod_uid="uid-hi-1", node_name="node-b", attempt_id="uid-hi-1/2"), producer="t"))
    decided = _evicting_nobody(await handler.handle(_request("hi-1")))
    assert decided.fits == ""
    assert decided.message == 'preemption: not needed, the pod was placed on node "node-b"'


async def test_a_request_for_a_deleted_pod_evicts_nobody() -> None:
    view = _cluster()
    handler = _handler(view)
    view.apply(envelope(PodSubmitted(pod=make_pod("hi-1", cpu="1", priority=100)), producer="t"))
    view.apply(envelope(PodDeleted(uid="uid-hi-1", namespace="default", name="hi-1"), producer="t"))
    decided = _evicting_nobody(await handler.handle(_request("hi-1")))
    assert decided.message == "preemption: not needed, the pod was deleted"


def _evicting_nobody(out: Sequence[OutgoingEvent]) -> PreemptionDecided:
    """The decision among `out`, checked to nominate and evict nobody."""
    decided = _decided(out)
    assert decided.nominated_node == "" and decided.victims == []
    assert not [o for o in out if isinstance(o.envelope.payload, (PodEvicted, PodNominated))]
    return decided


async def test_a_batch_handled_again_after_a_failure_hands_out_the_decisions_made_before_it() -> None:
    view = _cluster()
    handler = _handler(view)
    for name in ("hi-1", "hi-2"):
        view.apply(envelope(PodSubmitted(pod=make_pod(name, cpu="1", priority=100)), producer="t"))
    batch = [_request("hi-1", 0), _request("hi-2", 1)]
    decide = handler.decide

    async def failing_on_the_second(cause, req, folded, at):
        if req.pod.metadata.name == "hi-2":
            raise RuntimeError("lost the database")
        return await decide(cause, req, folded, at)

    handler.decide = failing_on_the_second  # type: ignore[method-assign]  # a failure part way
    with pytest.raises(RuntimeError):
        await handler.handle_batch(batch)
    handler.decide = decide  # type: ignore[method-assign]  # the real one again

    # The runtime handles the batch again: the first request's events come out once more, as they
    # were (nothing was published), and the second is decided.
    again = await handler.handle_batch(batch)
    decided = [o.envelope.payload for o in again if isinstance(o.envelope.payload, PreemptionDecided)]
    assert [d.preemptor_uid for d in decided] == ["uid-hi-1", "uid-hi-2"]
    evicted = [o.envelope.payload.uid for o in again if isinstance(o.envelope.payload, PodEvicted)]
    nominated = [o.envelope.payload.uid for o in again if isinstance(o.envelope.payload, PodNominated)]
    assert sorted(evicted) == ["uid-low-a", "uid-low-b"] and nominated == ["uid-hi-1", "uid-hi-2"]
    assert len({o.envelope.event_id for o in again}) == len(again)

    # Once the log holds them, a redelivered request gets nothing.
    _fold(view, handler, again)
    assert handler.unpublished == {} and await handler.handle_batch(batch) == []


async def test_a_request_decided_short_of_its_watermark_records_the_positions_decided_on() -> None:
    view = _cluster()
    view.apply(envelope(NodeUpserted(node=make_node("node-b", cpu="2")), producer="t"))
    view.apply(envelope(PodSubmitted(pod=make_pod("hi-1", cpu="1", priority=100)), producer="t"),
               Position("pods", 0, 0))

    async def never(watermark: Mapping[str, list[int]], timeout: float) -> bool:
        return False

    handler = PreemptionHandler(view, profiles_from(None), never, PreemptionMetrics(CollectorRegistry()))
    req = msgspec.structs.replace(_request("hi-1").payload, watermark={"pods": [5, 0]})
    decided = _decided(await handler.handle(ReceivedEvent(envelope(req, producer="queue"),
                                                          Position(PREEMPTION_REQUESTS, 0, 0))))
    assert decided.folded == {"pods": [1, 0]}  # replay folds to these, not to the watermark
    # A view short of the attempt's has not moved on: node-b looks free only because the events
    # that fill it were not folded yet, so the attempt's statuses stand.
    assert decided.fits == "" and decided.nominated_node == "node-a"


def test_recorded_positions_are_past_a_watermark_only_where_some_partition_is_beyond_it() -> None:
    assert folded_past({"pods": [3, 1]}, {"pods": [3, 0]})
    assert folded_past({"pods": [0, 0], "nodes": [1]}, {"pods": [5, 0]})  # a topic the watermark lacks
    assert not folded_past({"pods": [1, 0]}, {"pods": [5, 0]})
    assert not folded_past({}, {"pods": [5, 0]})


async def test_an_in_flight_decision_without_its_requests_offset_is_written_out_whole() -> None:
    """A decision read back after a restart that an earlier build made names no request offset: a
    decision made with it in flight cannot name it, so it records the overlay itself."""
    view = _cluster()
    handler = _handler(view)
    view.apply(envelope(PodSubmitted(pod=make_pod("hi-1", cpu="1", priority=100)), producer="t"))
    first = _decided(await handler.handle(_request("hi-1", 3)))
    restarted_view = _cluster()
    for name in ("hi-1", "hi-2"):
        restarted_view.apply(envelope(PodSubmitted(pod=make_pod(name, cpu="1", priority=100)), producer="t"))
    restarted = _handler(restarted_view)
    unnamed = msgspec.structs.replace(first, request_at=-1)
    restarted.on_event(envelope(unnamed, producer="preemption", caused_by=_request("hi-1", 3).envelope))
    two = _decided(await restarted.handle(_request("hi-2", 4)))
    assert two.in_flight == [] and two.request_at == 4
    assert two.evicting == [first.victims[0].uid] and two.nominating == {"uid-hi-1": "node-a"}
    assert recorded_overlay(two, {}) == (two.evicting, two.nominating)


async def test_in_flight_decisions_read_back_out_of_order_are_overlaid_in_request_order() -> None:
    """Decisions read back after a restart come in the order the log gives them, not the order they
    were made: the overlay follows their requests' offsets, which is the order replay reads them
    back in from the decision that names them."""
    view = _cluster()
    for name in ("hi-1", "hi-2", "hi-3"):
        view.apply(envelope(PodSubmitted(pod=make_pod(name, cpu="1", priority=100)), producer="t"))
    handler = _handler(view)
    nominate = PreemptionDecided(preemptor_uid="uid-hi-1", nominated_node="node-a", attempt_id="uid-hi-1/1",
                                 victims=[PodRef(uid="uid-low-a")], request_at=2)
    clear = PreemptionDecided(preemptor_uid="uid-hi-2", nominated_node="node-a", attempt_id="uid-hi-2/1",
                              victims=[PodRef(uid="uid-low-b")], cleared=["uid-hi-1"], request_at=5)
    requests = {2: _request("hi-1", 2), 5: _request("hi-2", 5)}
    recorded = [envelope(d, producer="preemption", caused_by=requests[d.request_at].envelope)
                for d in (clear, nominate)]  # read back the later one first
    for env in recorded:
        handler.on_event(env)
    third = _decided(await handler.handle(_request("hi-3", 9)))
    assert third.in_flight == [2, 1, 5, 1]
    assert view.nominating == {"uid-hi-1": "", "uid-hi-2": "node-a"}  # the later request's clearing wins
    log = [requests[2], ReceivedEvent(recorded[1], Position("preemption", 1, 0)), requests[5],
           ReceivedEvent(recorded[0], Position("preemption", 2, 0))]
    third_at = ReceivedEvent(envelope(third, producer="preemption"), Position("preemption", 3, 0))
    history = History([*log, _request("hi-3", 9), third_at])
    assert recorded_overlay(third, history.decided_by_request) == (sorted(view.evicting), view.nominating)


async def test_a_request_read_off_another_topic_is_not_named_by_later_decisions() -> None:
    # An earlier build published requests on `preemption`: their offsets there name nothing.
    view = _cluster()
    handler = _handler(view)
    for name in ("hi-1", "hi-2"):
        view.apply(envelope(PodSubmitted(pod=make_pod(name, cpu="1", priority=100)), producer="t"))
    off = _request("hi-1")
    one = _decided(await handler.handle(ReceivedEvent(off.envelope, Position("preemption", 1, 0))))
    assert one.request_at == -1 and one.nominated_node == "node-a"
    two = _decided(await handler.handle(_request("hi-2", 4)))
    assert two.in_flight == [] and two.evicting == [one.victims[0].uid] and two.nominating == {"uid-hi-1": "node-a"}


async def test_a_request_decided_by_a_predecessor_read_back_while_waiting_is_not_decided_again() -> None:
    """The follower fetches only while requests come: a predecessor's decision of a redelivered
    request may be read back only while the request waits for its watermark."""
    view = _cluster()
    view.apply(envelope(PodSubmitted(pod=make_pod("hi-1", cpu="1", priority=100)), producer="t"))
    earlier = _decided(await _handler(_cluster()).handle(_request("hi-1")))
    request = _request("hi-1")
    handler: PreemptionHandler

    async def read_back(watermark: Mapping[str, list[int]], timeout: float) -> bool:
        handler.on_event(envelope(earlier, producer="preemption", caused_by=request.envelope))
        return True

    handler = PreemptionHandler(view, profiles_from(None), read_back, PreemptionMetrics(CollectorRegistry()))
    assert await handler.handle(request) == []


async def test_a_decision_folded_before_an_earlier_one_stays_overlaid_after_it() -> None:
    """In-flight decisions leave the overlay in request order: a later decision whose events the
    view has all folded still follows an earlier one whose eviction is on its way, so the earlier
    one's nomination does not come back over the later one's clearing."""
    view = _cluster()
    handler = _handler(view)
    view.apply(envelope(PodSubmitted(pod=make_pod("hi-1", cpu="1", priority=100)), producer="t"))
    view.apply(envelope(PodSubmitted(pod=make_pod("top", cpu="1", priority=200)), producer="t"))
    first = await handler.handle(_request("hi-1", 7))
    assert _decided(first).nominated_node == "node-a"
    # Overlaid, the eviction leaves room that hi-1's nomination does not hold against top: top
    # fits, is nominated there, and hi-1's nomination is cleared.
    top = PreemptionRequested(pod=make_pod("top", cpu="1", priority=200), node_statuses=FULL,
                              attempt_id="uid-top/1", seed=1)
    second = await handler.handle(ReceivedEvent(envelope(top, producer="queue"), Position(PREEMPTION_REQUESTS, 0, 8)))
    two = _decided(second)
    assert two.fits == "node-a" and two.cleared == ["uid-hi-1"]
    # The view reads the second decision whole and the first's nomination, not its eviction.
    _fold(view, handler, [*(o for o in first if isinstance(o.envelope.payload, PodNominated)), *second])
    handler.overlay()
    assert view.nominating.get("uid-hi-1") == "" and view.nominating.get("uid-top") == "node-a"
    assert [p.uid for p in view.nominator().nominated_pods_for_node("node-a")] == ["uid-top"]


async def test_a_request_whose_decision_raises_is_answered_evicting_nobody(monkeypatch: pytest.MonkeyPatch) -> None:
    # Unanswered, the preemptor would wait out the queue's preemption timeout (300 s by default).
    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("node-z")

    monkeypatch.setattr("services.preemption.handlers.decide_preemption", broken)
    out = await _handler(_cluster()).handle(_request("high"))
    assert [type(o.envelope.payload) for o in out] == [PreemptionDecided]
    decided = _decided(out)
    assert (decided.nominated_node, decided.victims, decided.attempt_id) == ("", [], "uid-high/1")
    assert decided.message == "preemption failed: KeyError: 'node-z'"


async def test_after_a_wait_in_vain_the_next_requests_wait_briefly_until_one_is_reached() -> None:
    # A batch of requests on a stalled view would otherwise wait the whole watermark wait each.
    waits: list[float] = []
    reachable = [False, False, True, True]

    async def reached(watermark: Mapping[str, list[int]], timeout: float) -> bool:
        waits.append(timeout)
        return reachable[len(waits) - 1]

    handler = PreemptionHandler(_cluster(), profiles_from(None), reached, PreemptionMetrics(CollectorRegistry()),
                                watermark_wait_s=10.0)
    for i, name in enumerate(("one", "two", "three", "four")):
        await handler.handle(_request(name, at=i))
    assert waits == [10.0, BEHIND_WAIT_S, BEHIND_WAIT_S, 10.0]


async def test_a_view_steadily_behind_is_waited_for_in_full_again_after_a_while(
        monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr("services.preemption.handlers.time.monotonic", lambda: now[0])
    waits: list[float] = []

    async def never(watermark: Mapping[str, list[int]], timeout: float) -> bool:
        waits.append(timeout)
        return False

    handler = PreemptionHandler(_cluster(), profiles_from(None), never, PreemptionMetrics(CollectorRegistry()),
                                watermark_wait_s=10.0)
    await handler.handle(_request("one", at=0))
    await handler.handle(_request("two", at=1))
    now[0] += 11.0
    await handler.handle(_request("three", at=2))
    assert waits == [10.0, BEHIND_WAIT_S, 10.0]
