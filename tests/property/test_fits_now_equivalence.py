"""The preemption service asks whether a preemptor fits somewhere now (its view moved since the
attempt) through the pod spec's node index, which keeps verdicts between requests, and reads the
attempt's packed failures through a memo of the last ones read. Whatever nominations, binds,
deletions and in-flight preemptions come between requests, the decision is the one a sequential
walk over the nodes and a fresh reading of the failures give."""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from services.runtime.scheduler_config import profiles_from
from shared.cluster import ClusterView, point_at
from shared.events import (
    NodeFailure,
    NodeUpserted,
    PodBound,
    PodDeleted,
    PodNominated,
    PodSubmitted,
    PreemptionRequested,
    envelope,
)
from shared.indexes.node_index import NodeIndexes
from shared.protocol.packed_failures import RejectionsMemo
from shared.protocol.preemption_request import decide_preemption
from tests.unit.events.samples import make_node, running
from tests.unit.preemption.support import make_pod

NODES = [f"n{i}" for i in range(12)]
PENDING = [f"p{i}" for i in range(6)]
RUNNING = [f"r{i}" for i in range(24)]
SHAPES = [("500m", 10), ("1", 10), ("1", 0), ("1500m", 100)]  # identical specs share an index


@st.composite
def clusters(draw: st.DrawFn) -> ClusterView:
    view = ClusterView()
    for name in NODES:
        view.apply(envelope(NodeUpserted(node=make_node(name, cpu=draw(st.sampled_from(["1", "2"])))), producer="t"))
    for i, name in enumerate(RUNNING):  # two running pods per node or more: most nodes full
        node = NODES[i % len(NODES)] if i < 2 * len(NODES) - 4 else draw(st.sampled_from(NODES))
        pod = make_pod(name, cpu=draw(st.sampled_from(["500m", "1", "1"])), priority=draw(st.sampled_from([0, 5, 50])),
                       node_name=node)
        for env in running(pod):
            view.apply(env)
    for name in PENDING:
        cpu, priority = draw(st.sampled_from(SHAPES))
        view.apply(envelope(PodSubmitted(pod=make_pod(name, cpu=cpu, priority=priority)), producer="t"))
    return view


operation = st.one_of(
    st.tuples(st.just("nominate"), st.sampled_from(PENDING), st.sampled_from([*NODES, ""])),
    st.tuples(st.just("bind"), st.sampled_from(PENDING), st.sampled_from(NODES)),
    st.tuples(st.just("delete"), st.sampled_from(PENDING + RUNNING), st.just("")),
    st.tuples(st.just("preempting"), st.lists(st.sampled_from(RUNNING), max_size=3, unique=True),
              st.dictionaries(st.sampled_from(PENDING), st.sampled_from(NODES), max_size=3)),
)


def _uid(name: str) -> str:
    return f"uid-{name}"


def _apply(view: ClusterView, kind: str, a: object, b: object) -> None:
    match kind:
        case "nominate":
            view.apply(envelope(PodNominated(uid=_uid(str(a)), node_name=str(b)), producer="t"))
        case "bind":
            view.apply(envelope(PodBound(pod_uid=_uid(str(a)), node_name=str(b), attempt_id=f"{a}/1"), producer="t"))
        case "delete":
            view.apply(envelope(PodDeleted(uid=_uid(str(a)), namespace="default", name=str(a)), producer="t"))
        case "preempting":
            view.set_preempting([_uid(v) for v in a], {_uid(k): v for k, v in b.items()})  # type: ignore[attr-defined]  # this op draws a list and a dict


def _request(view: ClusterView, name: str, step: int) -> PreemptionRequested:
    """The pending pod's request as the queue makes it: its nomination, if any, in its status, and
    every node short of cpu at its attempt."""
    uid = _uid(name)
    pod = view.specs[uid]
    status = msgspec.structs.replace(pod.status, nominated_node_name=view.nominated.get(uid, ""))
    return PreemptionRequested(pod=msgspec.structs.replace(pod, status=status), node_statuses=[
        NodeFailure(code="Unschedulable", reasons=["Insufficient cpu"], plugin="NodeResourcesFit", at=[0, len(NODES)])],
                               attempt_id=f"{uid}/{step}", seed=step, watermark={})


@settings(max_examples=150, deadline=None)
@given(view=clusters(), operations=st.lists(operation, max_size=25))
def test_the_indexed_fits_now_answer_is_the_sequential_one(view: ClusterView, operations: list[tuple]) -> None:
    fwk = profiles_from(None)["default-scheduler"]
    indexes, memo = NodeIndexes(), RejectionsMemo()
    for step, (kind, a, b) in enumerate([("start", "", ""), *operations]):
        _apply(view, kind, a, b)
        for name in PENDING:
            req = _request(view, name, step)
            indexed = decide_preemption(fwk, view, req, moved=True, indexes=indexes, memo=memo)
            plain = decide_preemption(fwk, view, req, moved=True)
            assert (indexed.fits, indexed.nominated, indexed.message, [v.uid for v in indexed.victims]) == (
                plain.fits, plain.nominated, plain.message, [v.uid for v in plain.victims]), (step, kind, a, b, name)


def test_first_fit_meets_a_node_local_error_where_the_walk_does() -> None:
    """A node-local filter answering Error on one node: before the first node that fits, the
    one-pass check raises it as the index's walk does; past it, both answer the fitting node."""
    from unittest import mock

    from shared.framework.cycle_state import CycleState
    from shared.framework.pod_info import PodInfo
    from shared.framework.status import Code, Status
    from shared.indexes.node_index import WalkError, filters_after_index
    from shared.plugins.noderesources.fit import Fit

    view = ClusterView()
    for i, name in enumerate(NODES):
        view.apply(envelope(NodeUpserted(node=make_node(name, cpu="2")), producer="t"))
        if i != 8:  # every node full but n8
            for env in running(make_pod(f"r{i}", cpu="2", priority=0, node_name=name)):
                view.apply(env)
    view.apply(envelope(PodSubmitted(pod=make_pod("p0", cpu="1", priority=50)), producer="t"))
    view.apply(envelope(PodNominated(uid=_uid("p0"), node_name="n3"), producer="t"))  # a full node nominated
    real = Fit.filter
    order = view.snapshot().names
    before, after = order[order.index("n8") - 1], order[order.index("n8") + 1]
    for broken, expected in ((before, "raise"), (after, "n8")):
        def flaky(self, state, pod, node_info, broken=broken):
            if node_info.name == broken:
                return Status(Code.ERROR, f"{broken} unreachable")
            return real(self, state, pod, node_info)

        with mock.patch.object(Fit, "filter", flaky):
            answers = []
            for one_pass in (True, False):
                fwk = profiles_from(None)["default-scheduler"]  # nothing remembered from another case
                req = _request(view, "p0", 0)
                pod = PodInfo(msgspec.structs.replace(req.pod, metadata=msgspec.structs.replace(
                    req.pod.metadata, name="asker", uid="uid-asker")))
                point_at([fwk], view)
                state = CycleState()
                fwk.run_pre_filter_plugins(state, pod)
                assert filters_after_index(fwk, state, pod) == ()  # every filter node-local
                index = NodeIndexes().get(fwk, pod, view.snapshot())
                try:
                    if one_pass:
                        at = index.first_fit(fwk, state, pod)
                    else:
                        walked = index.walk(fwk, state, pod, 0, 1, ())
                        at = int(walked.feasible[0]) if len(walked.feasible) else -1
                    answers.append(index.names[at] if at >= 0 else "")
                except WalkError as exc:
                    answers.append(f"raise: {exc.status.message()}")
            assert answers[0] == answers[1], broken
            assert answers[0] == expected or answers[0].startswith(expected), answers
