"""Identical pods share one shard answer: the key tells apart exactly what a shard's walk can."""

from __future__ import annotations

import msgspec

from shared.events import PodShardResult
from shared.framework.pod_info import PodInfo
from shared.model import Pod
from shared.model.loader import load_objects
from shared.protocol.answers import Walk, decode_all
from shared.protocol.same_answers import answer_key, same_as, shared_results
from tests.builders import MakePod


def _pod(name: str, namespace: str = "default", app: str = "web", created: str = "") -> Pod:
    """A pod as the loader gives it (priority and preemption policy defaulted)."""
    b = MakePod().name(name).namespace(namespace).uid(f"uid-{name}").label("app", app)
    b.container(image="", name="c", requests={"cpu": "100m"})
    if created:
        b.creation_timestamp(created)
    return load_objects([("t", {"kind": "Pod", **b.raw()})]).pods[0]


def _key(pod: Pod, start: int = 7, nominated: bool = False) -> bytes | None:
    return answer_key(pod, start, PodInfo(pod).signature(), nominated=nominated)


def test_pods_only_names_tell_apart_have_one_key() -> None:
    assert _key(_pod("a")) == _key(_pod("b", created="2026-01-01T00:00:00Z"))


def test_what_a_walk_can_tell_apart_changes_the_key() -> None:
    base = _key(_pod("a"))
    assert _key(_pod("a"), start=8) != base
    assert _key(_pod("b", app="db")) != base  # affinity and spreading read labels
    assert _key(_pod("b", namespace="other")) != base
    spec = _pod("b")
    bigger = msgspec.structs.replace(spec, spec=msgspec.structs.replace(spec.spec, priority=5))
    assert _key(bigger) != base


def test_a_nominated_pod_is_answered_for_itself() -> None:
    pod = _pod("a")
    nominated = msgspec.structs.replace(pod, status=msgspec.structs.replace(pod.status, nominated_node_name="n1"))
    assert _key(nominated) is None
    assert _key(pod, nominated=True) is None  # the view nominates it: its own nomination is not counted


def test_references_resolve_to_the_answer_they_name() -> None:
    first = PodShardResult(pod_uid="u1", feasible=["n1", "n2"])
    other = PodShardResult(pod_uid="u3", feasible=["n3"])
    results = [first, same_as("u2", "u1"), other, same_as("u4", "u2")]
    shared = shared_results(results)
    assert shared[1] is first and shared[3] is first and shared[2] is other
    decoded = decode_all(results)  # decoded once: the pods that share an answer share its decoding
    assert decoded[1] is decoded[0] and decoded[3] is decoded[0] and decoded[2] is not decoded[0]
    assert isinstance(decoded[3], Walk) and decoded[3].feasible == ["n1", "n2"]
