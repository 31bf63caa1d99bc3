"""The cluster view keeps its nominator between changes: whatever sequence of folded events and
overlays (a request's assumptions, preemptions in flight) it goes through, the kept nominator
lists what one built afresh would, and its stamps change only where the nominated pods did."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.cluster import ClusterView
from shared.events import NodeUpserted, PodBound, PodDeleted, PodNominated, PodSubmitted, envelope
from tests.unit.events.samples import make_node, make_pod

NODES = ["n0", "n1", "n2"]
PENDING = [f"p{i}" for i in range(5)]
RUNNING = [f"r{i}" for i in range(3)]


def _view() -> ClusterView:
    view = ClusterView()
    for name in NODES:
        view.apply(envelope(NodeUpserted(node=make_node(name, cpu="8")), producer="t"))
    for i, name in enumerate(RUNNING):
        view.apply(envelope(PodSubmitted(pod=make_pod(name, cpu="1", node_name=NODES[i % len(NODES)])), producer="t"))
    for name in PENDING:
        view.apply(envelope(PodSubmitted(pod=make_pod(name, cpu="1", priority=10)), producer="t"))
    return view


def _uid(name: str) -> str:
    return f"uid-{name}"


node = st.sampled_from(NODES)
pending = st.sampled_from(PENDING)
operation = st.one_of(
    st.tuples(st.just("nominate"), pending, st.sampled_from([*NODES, ""])),
    st.tuples(st.just("bind"), pending, node),
    st.tuples(st.just("delete"), st.sampled_from(PENDING + RUNNING), st.just("")),
    st.tuples(st.just("assume"), st.dictionaries(pending, node, max_size=3), st.just("")),
    st.tuples(st.just("preempting"), st.lists(st.sampled_from(RUNNING), max_size=2, unique=True),
              st.dictionaries(pending, st.sampled_from([*NODES, ""]), max_size=3)),
)


def _listing(view: ClusterView) -> dict[str, list[str]]:
    nominator = view.nominator()
    return {name: [p.uid for p in nominator.nominated_pods_for_node(name)] for name in NODES}


def _apply(view: ClusterView, op: tuple) -> None:
    kind, a, b = op
    match kind:
        case "nominate":
            view.apply(envelope(PodNominated(uid=_uid(a), node_name=b), producer="t"))
        case "bind":
            view.apply(envelope(PodBound(pod_uid=_uid(a), node_name=b, attempt_id=f"{a}/1"), producer="t"))
        case "delete":
            view.apply(envelope(PodDeleted(uid=_uid(a), namespace="default", name=a), producer="t"))
        case "assume":
            view.set_assumed((_uid(k), v) for k, v in a.items())
        case "preempting":
            view.set_preempting([_uid(v) for v in a], {_uid(k): v for k, v in b.items()})


@settings(max_examples=200, deadline=None)
@given(st.lists(operation, max_size=12))
def test_the_kept_nominator_matches_a_fresh_one(operations: list[tuple]) -> None:
    view = _view()
    for i, op in enumerate(operations):
        before = dict(view.nominator().stamps)
        listed_before = _listing(view)
        _apply(view, op)
        kept = _listing(view)
        stamps = view.nominator().stamps
        fresh = _view()  # the same changes, its nominator built only now: what a rebuild lists
        for done in operations[:i + 1]:
            _apply(fresh, done)
        assert kept == _listing(fresh), op
        for name in NODES:
            if kept[name] != listed_before[name]:
                assert stamps.get(name, 0) != before.get(name, 0), (op, name)
