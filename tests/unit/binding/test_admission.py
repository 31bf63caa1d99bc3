"""A node's admission of pods created with spec.nodeName, as the kubelet admits them: the fit
check against what the node runs, the kubelet's reason and message when it refuses, and Pending
(not Failed) while the node does not exist."""

from __future__ import annotations

import pytest

from shared.binding import NODE_NOT_FOUND
from shared.binding.admission import admission_request, attempt_id, is_admission, tries_of
from shared.events import BindRejected, PodBound
from shared.model import Pod
from tests.builders import MakePod

from .support import NOW, node, outcome, state_with


def on_node(uid: str, node_name: str = "n1", cpu: str = "1", port: int = 0) -> Pod:
    b = MakePod().name(uid).uid(uid).req(cpu=cpu, memory="1Gi").node(node_name)
    return (b.host_port(port) if port else b).obj()


def test_a_pod_that_fits_is_admitted_and_counts_against_the_next() -> None:
    state = state_with(node(cpu="8"))
    assert isinstance(outcome(state, admission_request(on_node("running", cpu="6"), 1, "queue")), PodBound)
    refused = outcome(state, admission_request(on_node("big", cpu="7"), 1, "queue"))
    assert isinstance(refused, BindRejected)
    assert refused.status_reason == "OutOfcpu"
    assert refused.reason == ("Pod was rejected: Node didn't have enough resource: cpu, requested: 7000, "
                              "used: 6000, capacity: 8000")


@pytest.mark.parametrize(("running", "asking", "reason", "message"), [
    (on_node("a", cpu="1"), on_node("b", cpu="1"), "OutOfpods",
     "Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 1"),
    (on_node("a", port=8080), on_node("b", port=8080), "NodePorts",
     "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"),
])
def test_the_kubelets_reason_for_each_refusal(running: Pod, asking: Pod, reason: str, message: str) -> None:
    state = state_with(node(pods=1) if reason == "OutOfpods" else node())
    assert isinstance(outcome(state, admission_request(running, 1, "queue")), PodBound)
    refused = outcome(state, admission_request(asking, 1, "queue"))
    assert isinstance(refused, BindRejected) and (refused.status_reason, refused.reason) == (reason, message)


def test_a_node_that_does_not_exist_leaves_the_pod_pending_not_failed() -> None:
    refused = outcome(state_with(node()), admission_request(on_node("p", node_name="ghost"), 1, "queue"))
    assert isinstance(refused, BindRejected)
    assert (refused.reason, refused.status_reason) == (NODE_NOT_FOUND, "")


def test_the_same_request_asked_again_has_the_same_id_and_is_answered_once() -> None:
    state = state_with(node(cpu="8"))
    first = state.decide(0, admission_request(on_node("p", cpu="6"), 1, "queue"), NOW)
    again = state.decide(0, admission_request(on_node("p", cpu="6"), 1, "queue"), NOW)
    assert first.event_id == again.event_id
    assert admission_request(on_node("p"), 2, "queue").event_id != admission_request(on_node("p"), 1, "queue").event_id


def test_admission_attempt_ids_are_told_apart_from_the_schedulers() -> None:
    assert is_admission(attempt_id("u1", 3)) and tries_of(attempt_id("u1", 3)) == 3
    assert not is_admission("5f2c0a4e-1b6d-4c53-9d0e-3c8b1f7a2e61") and tries_of("x") == 0
