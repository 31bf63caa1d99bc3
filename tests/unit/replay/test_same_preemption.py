"""Replay's comparison of a preemption it decided with the recorded one."""

from __future__ import annotations

from shared.events import PodRef, PreemptionDecided
from shared.framework.pod_info import PodInfo
from shared.protocol.preemption_request import PreemptionOutcome, fits_now_message
from shared.replay.engine import same_preemption

from ..events.samples import make_pod

FITS = fits_now_message("node-a")


def _decided(node: str, message: str, *, fits: str = "", victims: tuple[str, ...] = ()) -> PreemptionDecided:
    return PreemptionDecided(preemptor_uid="uid-p", nominated_node=node, attempt_id="uid-p/1", message=message,
                             fits=fits, victims=[PodRef(uid=v) for v in victims])


def test_a_fits_answer_recorded_before_it_nominated_is_the_same_answer() -> None:
    replayed = PreemptionOutcome("node-a", FITS, fits="node-a")
    assert same_preemption(replayed, _decided("node-a", FITS, fits="node-a"))
    assert same_preemption(replayed, _decided("", FITS, fits="node-a"))  # an earlier build's record
    assert not same_preemption(replayed, _decided("", FITS, fits="node-b"))


def test_a_nomination_or_victims_that_differ_are_not_the_same() -> None:
    victim = PodInfo(make_pod("low", "uid-low"))
    replayed = PreemptionOutcome("node-a", "", victims=[victim])
    assert same_preemption(replayed, _decided("node-a", "", victims=("uid-low",)))
    assert not same_preemption(replayed, _decided("", "", victims=("uid-low",)))
    assert not same_preemption(replayed, _decided("node-a", "", victims=("uid-other",)))
