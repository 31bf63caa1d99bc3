"""An eviction is keyed by its victim and its preemptor's PodNominated by the preemptor, so a view
can read them in either order. The eviction nominates the preemptor too (the room it frees is
never free to pods the nomination holds off), and of a pod's nominations the latest decision's
holds: where a view has a pod nominated depends on which events it has read, not on the order it
read them."""

from __future__ import annotations

import itertools

from shared.cluster import ClusterView
from shared.events import AnyEvent, NodeUpserted, PodBound, PodDeleted, PodEvicted, PodNominated, PodSubmitted, envelope
from tests.unit.events.samples import make_node, make_pod

Event = PodNominated | PodEvicted


def _view() -> ClusterView:
    view = ClusterView()
    for node in ("n1", "n2", "n3"):
        view.apply(envelope(NodeUpserted(node=make_node(node, cpu="4")), producer="t"))
    for name, node in (("v1", "n1"), ("v3", "n3")):
        view.apply(envelope(PodSubmitted(pod=make_pod(name, cpu="1", priority=0, node_name=node)), producer="t"))
        view.apply(envelope(PodBound(pod_uid=f"uid-{name}", node_name=node, attempt_id=f"{name}/a"), producer="t"))
    view.apply(envelope(PodSubmitted(pod=make_pod("pre", cpu="1", priority=100)), producer="t"))
    return view


def _fold(view: ClusterView, *events: AnyEvent) -> None:
    for event in events:
        view.apply(envelope(event, producer="t"))


def test_an_eviction_read_first_nominates_its_preemptor() -> None:
    view = _view()
    _fold(view, PodEvicted(uid="uid-v1", preemptor_uid="uid-pre", node_name="n1", request_at=4))
    assert view.nominated == {"uid-pre": "n1"}
    assert [p.uid for p in view.nominator().nominated_pods_for_node("n1")] == ["uid-pre"]
    _fold(view, PodNominated(uid="uid-pre", node_name="n1", request_at=4))
    assert view.nominated == {"uid-pre": "n1"}


def test_an_eviction_of_an_unknown_decision_nominates_nobody() -> None:
    view = _view()
    _fold(view, PodEvicted(uid="uid-v1", preemptor_uid="uid-pre", node_name="n1"))
    assert view.nominated == {}


def test_an_eviction_read_after_its_preemptor_was_placed_or_deleted_nominates_nobody() -> None:
    bound, deleted = _view(), _view()
    _fold(bound, PodBound(pod_uid="uid-pre", node_name="n2", attempt_id="pre/a"))
    _fold(deleted, PodDeleted(uid="uid-pre", namespace="default", name="pre"))
    for view in (bound, deleted):
        _fold(view, PodEvicted(uid="uid-v1", preemptor_uid="uid-pre", node_name="n1", request_at=4))
        assert "uid-pre" not in view.nominated
        assert view.nominator().nominated_pods_for_node("n1") == []


def _latest(folded: list[Event]) -> str | None:
    """The nomination the latest decision among `folded` made (None: cleared, or none read)."""
    if not folded:
        return None
    last = max(folded, key=lambda e: e.request_at)
    return last.node_name or None


def test_a_preemptors_nomination_depends_on_the_events_read_not_their_order() -> None:
    # Three decisions for one preemptor: evict v1 for n1 (offset 1), nothing helps (offset 5,
    # its nomination cleared), evict v3 for n3 (offset 9). Its own events come in order on its
    # partition; each eviction on its victim's.
    own: list[Event] = [PodNominated(uid="uid-pre", node_name="n1", request_at=1),
           PodNominated(uid="uid-pre", node_name="", request_at=5),
           PodNominated(uid="uid-pre", node_name="n3", request_at=9)]
    streams: list[list[Event]] = [
        own, [PodEvicted(uid="uid-v1", preemptor_uid="uid-pre", node_name="n1", request_at=1)],
        [PodEvicted(uid="uid-v3", preemptor_uid="uid-pre", node_name="n3", request_at=9)]]
    labels = [k for k, stream in enumerate(streams) for _ in stream]
    orders = set(itertools.permutations(labels))
    assert len(orders) == 20
    for order in orders:
        view, taken, folded = _view(), [0, 0, 0], []
        for k in order:
            event = streams[k][taken[k]]
            taken[k] += 1
            _fold(view, event)
            folded.append(event)
            assert view.nominated.get("uid-pre") == _latest(folded), (order, folded)


def test_a_nomination_read_after_its_pods_deletion_nominates_nobody() -> None:
    # The pod was deleted while its preemption was being decided: the decision's nomination comes
    # after the deletion on the pod's partition, and must not hold room for a pod that is gone.
    view = _view()
    _fold(view, PodDeleted(uid="uid-pre", namespace="default", name="pre"),
          PodNominated(uid="uid-pre", node_name="n1", request_at=4))
    assert "uid-pre" not in view.nominated
    assert view.nominator().nominated_pods_for_node("n1") == []
    # A nomination in flight in the preemption service's overlay is dropped the same way.
    view.set_preempting([], {"uid-pre": "n2"})
    assert view.nominator().nominated_pods_for_node("n2") == []
