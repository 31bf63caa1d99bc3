"""The preemptions in flight when one is decided: a decision names them by their requests' offsets,
and the overlay read back from those names is the one the service used."""

from __future__ import annotations

from shared.events import (
    PREEMPTION,
    PREEMPTION_REQUESTS,
    PodRef,
    Position,
    PreemptionDecided,
    PreemptionRequested,
    ReceivedEvent,
    envelope,
)
from shared.protocol.preemption_in_flight import effects_of, offsets_as_runs, overlay, recorded_overlay
from shared.replay.history import History

from ..events.samples import make_pod


def _decided(uid: str, node: str = "", victims: tuple[str, ...] = (), cleared: tuple[str, ...] = (),
             at: int = -1, **fields: object) -> PreemptionDecided:
    return PreemptionDecided(preemptor_uid=uid, nominated_node=node, victims=[PodRef(uid=v) for v in victims],
                             cleared=list(cleared), attempt_id=f"{uid}/1", request_at=at, **fields)  # type: ignore[arg-type]  # any field


def test_a_decision_evicts_its_victims_clears_nominations_then_nominates_its_preemptor() -> None:
    d = _decided("p", "node-a", victims=("v1", "v2"), cleared=("q",))
    assert effects_of(d) == (("v1", "v2"), (("q", ""), ("p", "node-a")))
    assert effects_of(_decided("p", cleared=("p",))) == ((), (("p", ""),))


def test_the_overlay_is_every_effect_with_the_later_nomination_winning() -> None:
    first = effects_of(_decided("p", "node-a", victims=("v1",)))
    later = effects_of(_decided("q", "node-b", victims=("v2",), cleared=("p",)))
    assert overlay([first, later]) == (["v1", "v2"], {"p": "", "q": "node-b"})
    assert overlay([later, first]) == (["v1", "v2"], {"p": "node-a", "q": "node-b"})


def test_offsets_are_named_as_ascending_runs() -> None:
    assert offsets_as_runs([]) == []
    assert offsets_as_runs([9, 3, 4, 5]) == [3, 3, 9, 1]
    assert offsets_as_runs([5, 3, 3]) == [3, 1, 5, 1]


def test_the_recorded_overlay_reads_the_named_decisions_in_request_order() -> None:
    p = _decided("p", "node-a", victims=("v1",), at=4)
    q = _decided("q", "node-b", victims=("v2",), cleared=("p",), at=5)
    by_request = {4: p, 5: q}
    assert recorded_overlay(_decided("r", in_flight=offsets_as_runs([5, 4])), by_request) == (
        ["v1", "v2"], {"p": "", "q": "node-b"})
    # A named decision the log lacks is left out.
    assert recorded_overlay(_decided("r", in_flight=offsets_as_runs([4, 6])), by_request) == (["v1"], {"p": "node-a"})
    # An earlier build's decision carries the overlay itself.
    old = _decided("r", evicting=["v9"], nominating={"s": "node-c"})
    assert recorded_overlay(old, by_request) == (["v9"], {"s": "node-c"})


def test_the_history_finds_a_decision_by_its_requests_offset() -> None:
    request = PreemptionRequested(pod=make_pod(uid="uid-p"), attempt_id="uid-p/1")
    decided = _decided("uid-p", "node-a", victims=("v1",), at=0)
    events = [ReceivedEvent(envelope(request, producer="q"), Position(PREEMPTION_REQUESTS, 0, 0)),
              ReceivedEvent(envelope(decided, producer="p"), Position(PREEMPTION, 2, 0))]
    assert History(events).decided_by_request == {0: decided}
