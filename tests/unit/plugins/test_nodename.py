"""NodeName, as upstream's node_name_test.go."""

from __future__ import annotations

import pytest

from shared.framework import events
from shared.framework.cycle_state import CycleState
from shared.framework.status import Code, Status
from shared.plugins.nodename import ERR_REASON, NodeName
from tests.builders import MakeNode, MakePod

CASES = [
    ("no host specified", "", "foo", None),
    ("host matches", "foo", "foo", None),
    ("host doesn't match", "bar", "foo", Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)),
]


@pytest.mark.parametrize(("pod_node", "node", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_filter(pod_node: str, node: str, want: Status | None) -> None:
    pod = MakePod().name("p")
    if pod_node:
        pod.node(pod_node)
    assert NodeName().filter(CycleState(), pod.info(), MakeNode().name(node).info()) == want


@pytest.mark.parametrize(("pod_node", "want"), [("", None), ("node-a", {"node-a"})], ids=["unset", "set"])
def test_pre_filter(pod_node: str, want: set[str] | None) -> None:
    pod = MakePod().name("p")
    if pod_node:
        pod.node(pod_node)
    result, status = NodeName().pre_filter(CycleState(), pod.info(), [])
    assert status is None
    assert (result.node_names if result is not None else None) == want


def test_events_to_register() -> None:
    (event,) = NodeName().events_to_register()
    assert events.NODE_ADD.matches(event)
    assert not events.ClusterEvent(events.NODE, events.ActionType.UPDATE_NODE_LABEL).matches(event)
