"""SchedulingGates, as upstream's scheduling_gates_test.go."""

from __future__ import annotations

import pytest

from shared.framework import events
from shared.framework.status import Code, Status
from shared.plugins.schedulinggates import SchedulingGates
from tests.builders import MakePod

CASES = [
    ("pod does not carry scheduling gates", (), None),
    ("pod carries one gate", ("foo",),
     Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for scheduling gates: [foo]")),
    ("pod carries scheduling gates", ("foo", "bar"),
     Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for scheduling gates: [foo bar]")),
]


@pytest.mark.parametrize(("gates", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_pre_enqueue(gates: tuple[str, ...], want: Status | None) -> None:
    pod = MakePod().name("p")
    if gates:
        pod.scheduling_gates(*gates)
    got = SchedulingGates().pre_enqueue(pod.info())
    assert got == want
    if want is not None:
        assert got is not None and got.message() == want.reasons[0]


def test_events_to_register() -> None:
    (event,) = SchedulingGates().events_to_register()
    gates_gone = events.ClusterEvent(events.UNSCHEDULED_POD, events.ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    assert gates_gone.matches(event)
    assert not events.NODE_ADD.matches(event)
