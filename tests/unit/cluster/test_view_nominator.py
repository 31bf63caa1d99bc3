"""The view's nominator is kept up to date pod by pod: whatever the events, overlays and
assumptions, and whenever it is read, it holds exactly the pending, undeleted pods with a nomination,
each node's pods in the order their nominations came in (the log's before the overlay's), and a
node's stamp changes whenever its nominated pods do."""

from __future__ import annotations

import random
from typing import cast

import pytest

from shared.cluster import ClusterView
from shared.events import AnyEvent, NodeUpserted, PodBound, PodDeleted, PodEvicted, PodNominated, PodSubmitted, envelope
from shared.framework.pod_info import PodInfo
from tests.unit.events.samples import make_node, make_pod

NODES = [f"node-{k}" for k in range(4)]
PODS = [f"p{k}" for k in range(12)]


def _expected(view: ClusterView) -> dict[str, list[str]]:
    """A nominator built from scratch: `nominated` in its order, then the overlay's own."""
    out: dict[str, list[str]] = {}
    for uid, node in {**view.nominated, **view.nominating}.items():
        if (node and uid in view.specs and view.node_of(uid) is None and uid not in view.evicting
                and uid not in view.deleted):
            out.setdefault(node, []).append(uid)
    return out


def _listed(view: ClusterView) -> dict[str, list[str]]:
    nominator = view.nominator()
    return {node: [p.uid for p in nominator.nominated_pods_for_node(node)]
            for node in NODES if nominator.nominated_pods_for_node(node)}


def _operations(seed: int) -> list[tuple[str, object]]:
    rng = random.Random(seed)
    ops: list[tuple[str, object]] = []
    nominating: dict[str, str] = {}
    for _ in range(120):
        uid = f"uid-{rng.choice(PODS)}"
        kind = rng.choice(["nominate", "nominate", "clear", "bind", "assume", "unassume", "evict", "delete",
                           "overlay", "overlay", "submit"])
        if kind == "overlay":  # as the preemption service's overlay grows and drains
            if nominating and rng.random() < 0.4:
                nominating.pop(next(iter(nominating)))
            else:
                nominating[uid] = rng.choice([*NODES, ""])
            evicting = sorted(f"uid-{p}" for p in rng.sample(PODS, rng.randrange(3)))
            ops.append((kind, (evicting, dict(nominating))))
        else:
            ops.append((kind, (uid, rng.choice(NODES))))
    return ops


def _apply(view: ClusterView, kind: str, args: object) -> None:
    if kind == "overlay":
        evicting, nominating = cast(tuple[list[str], dict[str, str]], args)
        view.set_preempting(evicting, nominating)
        return
    uid, node = cast(tuple[str, str], args)
    name = uid.removeprefix("uid-")
    events: dict[str, AnyEvent] = {
        "nominate": PodNominated(uid=uid, node_name=node),
        "clear": PodNominated(uid=uid, node_name=""),
        "bind": PodBound(pod_uid=uid, node_name=node, attempt_id=f"{uid}/b"),
        "evict": PodEvicted(uid=uid, preemptor_uid="uid-x", node_name=node),
        "delete": PodDeleted(uid=uid, namespace="default", name=name),
        "submit": PodSubmitted(pod=make_pod(name, cpu="100m", priority=random.Random(name).randrange(3))),
    }
    event = events.get(kind)
    if event is not None:
        view.apply(envelope(event, producer="t"))
    elif kind == "assume":
        view.assume(uid, node)
    else:
        view.set_assumed([])


def _view() -> ClusterView:
    view = ClusterView()
    for node in NODES:
        view.apply(envelope(NodeUpserted(node=make_node(node, cpu="64")), producer="t"))
    for name in PODS:
        view.apply(envelope(PodSubmitted(pod=make_pod(name, cpu="100m", priority=1)), producer="t"))
    return view


@pytest.mark.parametrize("seed", range(30))
def test_the_nominator_follows_every_change_whenever_it_is_read(seed: int) -> None:
    often, once = _view(), _view()
    before: dict[str, tuple[list[PodInfo], int]] = {}
    for kind, args in _operations(seed):
        _apply(often, kind, args)
        _apply(once, kind, args)
        listed = _listed(often)
        assert listed == _expected(often), (kind, args)
        nominator = often.nominator()
        for node in NODES:
            pods, stamp = list(nominator.nominated_pods_for_node(node)), nominator.stamps.get(node, 0)
            if node in before and (len(pods) != len(before[node][0]) or any(
                    a is not b for a, b in zip(pods, before[node][0]))):
                assert stamp != before[node][1], (node, kind, args)  # its pods changed: a new stamp
            before[node] = (pods, stamp)
    assert _listed(once) == _listed(often) == _expected(once)


def test_pods_entering_the_overlay_together_keep_its_order() -> None:
    view = _view()
    order = ["uid-p5", "uid-p0", "uid-p11", "uid-p3", "uid-p1", "uid-p8"]
    view.set_preempting([], {uid: "node-0" for uid in order})
    assert _listed(view)["node-0"] == order
