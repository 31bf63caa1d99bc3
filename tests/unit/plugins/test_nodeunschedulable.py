"""NodeUnschedulable, as upstream's node_unschedulable_test.go."""

from __future__ import annotations

import pytest

from shared.framework import events
from shared.framework.cycle_state import CycleState
from shared.framework.status import Code, Status
from shared.plugins.nodeunschedulable import ERR_REASON_UNSCHEDULABLE, NodeUnschedulable
from tests.builders import MakeNode, MakePod

UNSCHEDULABLE_KEY = "node.kubernetes.io/unschedulable"

CASES = [
    ("schedulable node", MakePod(), False, None),
    ("unschedulable node", MakePod(), True, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)),
    ("toleration of the unschedulable taint", MakePod().toleration(UNSCHEDULABLE_KEY, effect="NoSchedule",
                                                                    operator="Exists"), True, None),
    ("toleration without effect", MakePod().toleration(UNSCHEDULABLE_KEY, operator="Exists"), True, None),
    ("tolerate everything", MakePod().toleration(operator="Exists"), True, None),
    ("toleration with the wrong effect", MakePod().toleration(UNSCHEDULABLE_KEY, effect="NoExecute",
                                                               operator="Exists"), True,
     Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)),
    ("Equal with the empty value", MakePod().toleration(UNSCHEDULABLE_KEY, effect="NoSchedule"), True, None),
    ("Equal with a value", MakePod().toleration(UNSCHEDULABLE_KEY, value="true", effect="NoSchedule"), True,
     Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)),
]


@pytest.mark.parametrize(("pod", "unschedulable", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_filter(pod: MakePod, unschedulable: bool, want: Status | None) -> None:
    node = MakeNode().name("n").unschedulable(unschedulable).info()
    assert NodeUnschedulable().filter(CycleState(), pod.name("p").info(), node) == want


def test_events_to_register() -> None:
    got = NodeUnschedulable().events_to_register()
    assert any(events.NODE_ADD.matches(e) for e in got)
    assert any(events.ClusterEvent(events.NODE, events.ActionType.UPDATE_NODE_TAINT).matches(e) for e in got)
    assert any(events.ClusterEvent(events.UNSCHEDULED_POD, events.ActionType.UPDATE_POD_TOLERATION).matches(e)
               for e in got)
