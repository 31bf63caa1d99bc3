"""Replay evaluates a filter request as its worker answered it: pods that only their names tell
apart share one walk, and what each pod gets is what it would get walked on its own."""

from __future__ import annotations

from services.runtime.scheduler_config import profiles_from
from shared.cluster import ClusterView
from shared.cluster.view import point_at
from shared.events import (
    NODES,
    PODS,
    FilterBatchRequested,
    NodeUpserted,
    PodNominated,
    PodSubmitted,
    Position,
    envelope,
)
from shared.model import Pod
from shared.replay.rebuild import Evaluation, evaluate, evaluate_batch
from tests.unit.events.samples import make_node, make_pod


def _view(pods: list[Pod]) -> ClusterView:
    view = ClusterView()
    for i, name in enumerate(("node-a", "node-b", "node-c")):
        cpu = "1" if name == "node-c" else "4"  # node-c too small for a 2-cpu pod
        view.apply(envelope(NodeUpserted(node=make_node(name, cpu=cpu)), producer="t"), Position(NODES, 0, i))
    for i, pod in enumerate(pods):
        view.apply(envelope(PodSubmitted(pod=pod), producer="t"), Position(PODS, 0, i))
    return view


def _same(a: Evaluation, b: Evaluation) -> bool:
    return (a.merged.feasible == b.merged.feasible and a.merged.error == b.merged.error
            and {n: s.message() for n, s in a.merged.diagnosis.node_to_status.items()}
            == {n: s.message() for n, s in b.merged.diagnosis.node_to_status.items()}
            and {p: dict(c) for p, c in a.raw.items()} == {p: dict(c) for p, c in b.raw.items()})


def test_alike_pods_share_a_walk_and_get_what_their_own_walk_gives() -> None:
    pods = [make_pod("web-0", cpu="2", scheduler_name="default-scheduler"),
            make_pod("web-1", cpu="2", scheduler_name="default-scheduler"),
            make_pod("db-0", cpu="500m", scheduler_name="default-scheduler"),
            make_pod("web-2", cpu="2", scheduler_name="default-scheduler"),  # another start: its own walk
            make_pod("web-3", cpu="2", scheduler_name="default-scheduler"),  # nominated: its own walk
            make_pod("web-4", cpu="2", scheduler_name="default-scheduler")]  # an extender's: its own walk
    view = _view(pods)
    view.apply(envelope(PodNominated(uid="uid-web-3", node_name="node-a"), producer="t"), Position(PODS, 0, 6))
    request = FilterBatchRequested(batch_id="b", cycle=1, phase="filter", pods=pods, starts=[0, 0, 0, 1, 0, 0])
    profiles = profiles_from(None)
    point_at(profiles.values(), view)
    shared = evaluate_batch(profiles, request, view, alone={"uid-web-4"})

    snapshot = view.snapshot()
    every_node = set(snapshot.node_info_map)
    alone = [evaluate(profiles, pod, snapshot, start, every_node) for pod, start in zip(pods, request.starts)]
    assert [e.info.uid for e in shared] == [p.metadata.uid for p in pods]
    assert all(_same(a, b) for a, b in zip(shared, alone))
    assert shared[0].merged.feasible == ["node-a", "node-b"]
    # web-1 shares web-0's walk; its merge and diagnosis are its own objects (an extender's answer
    # narrows one pod's merge, a report sets one pod's PostFilter message).
    assert shared[1].result is shared[0].result and shared[1].merged is not shared[0].merged
    assert shared[1].merged.diagnosis is not shared[0].merged.diagnosis
    assert all(shared[i].result is not shared[0].result for i in (2, 3, 4, 5))
