"""A pod created with spec.nodeName counts on its node only once the node admitted it, in the place
of a pod running at submission; one its node refused never counts and is not waiting any more."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from shared.binding.admission import admission_request
from shared.cluster import ClusterView
from shared.events import AnyEvent, BindRejected, NodeUpserted, PodBound, PodSubmitted, envelope
from tests.unit.events.samples import make_node, make_pod

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _fold(view: ClusterView, *payloads: AnyEvent) -> None:
    for i, p in enumerate(payloads):
        view.apply(envelope(p, producer="t", timestamp=T0 + timedelta(seconds=len(view.specs) + i)))


def _pods_on(view: ClusterView, node: str) -> list[str]:
    return [p.uid for p in view.nodes[node].pods]


def test_counted_once_admitted_and_listed_before_scheduled_pods() -> None:
    view = ClusterView()
    created = make_pod("sys", "u1", node_name="n1")
    _fold(view, NodeUpserted(node=make_node("n1")), PodSubmitted(pod=created), PodSubmitted(pod=make_pod("web", "u2")))
    assert view.unadmitted("u1") and _pods_on(view, "n1") == []
    _fold(view, PodBound(pod_uid="u2", node_name="n1", attempt_id="a1"))
    asked = admission_request(created, 1, "queue")
    view.apply(asked)
    # In flight it is assumed like any bind, listed among the pods running at submission.
    assert _pods_on(view, "n1") == ["u1", "u2"] and not view.is_bound("u1")
    _fold(view, PodBound(pod_uid="u1", node_name="n1", attempt_id="admission/u1/1"))
    assert not view.unadmitted("u1") and view.is_bound("u1") and _pods_on(view, "n1") == ["u1", "u2"]


def test_refused_it_never_counts() -> None:
    view = ClusterView()
    created = make_pod("big", "u1", node_name="n1")
    _fold(view, NodeUpserted(node=make_node("n1")), PodSubmitted(pod=created))
    view.apply(admission_request(created, 1, "queue"))
    _fold(view, BindRejected(pod_uid="u1", node_name="n1", attempt_id="admission/u1/1", reason="…",
                             status_reason="OutOfcpu"))
    assert _pods_on(view, "n1") == [] and "u1" in view.refused and not view.unadmitted("u1")
