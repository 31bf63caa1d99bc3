"""The follower's gated fold: exactly up to a request's watermark, or (the preemption service) on to
everything received, in one fold that replay reproduces from the positions the decision records."""

from __future__ import annotations

import random

from services.preemption.app import build as build_preemption
from services.preemption.handlers import PreemptionHandler
from services.preemption.settings import load as load_preemption
from services.runtime.follower import LogFollower
from shared.cluster import ClusterView
from shared.events import (
    NODES,
    PLACEMENTS,
    PODS,
    PREEMPTION,
    AnyEvent,
    NodeUpserted,
    PodBound,
    PodNominated,
    PodSubmitted,
    Position,
    ReceivedEvent,
    TopicRegistry,
    envelope,
)
from shared.replay.history import History
from shared.replay.rebuild import LogFolder
from shared.settings import load_service_settings
from tests.unit.events.samples import make_node, make_pod


def _log(seed: int) -> list[ReceivedEvent]:
    """Nodes on two partitions; pods submitted, nominated and bound on two more, interleaved."""
    rnd = random.Random(seed)
    nodes = [f"node-{i}" for i in range(4)]
    by_topic: dict[tuple[str, int], list[AnyEvent]] = {}
    for name in nodes:
        by_topic.setdefault((NODES, rnd.randrange(2)), []).append(NodeUpserted(node=make_node(name)))
    for i in range(12):
        uid, part = f"uid-p{i}", rnd.randrange(2)
        by_topic.setdefault((PODS, part), []).append(PodSubmitted(pod=make_pod(f"p{i}", uid, cpu="100m")))
        if rnd.random() < 0.5:
            by_topic.setdefault((PODS, part), []).append(PodNominated(uid=uid, node_name=rnd.choice(nodes)))
        else:
            by_topic.setdefault((PLACEMENTS, 0), []).append(
                PodBound(pod_uid=uid, node_name=rnd.choice(nodes), attempt_id=f"{uid}/1"))
    return [ReceivedEvent(envelope(p, producer="t"), Position(topic, part, offset))
            for (topic, part), payloads in sorted(by_topic.items()) for offset, p in enumerate(payloads)]


def _follower(events: list[ReceivedEvent]) -> LogFollower:
    follower = LogFollower(load_service_settings("preemption", {}), TopicRegistry(),
                           (NODES, PODS, PLACEMENTS, PREEMPTION), ClusterView(), gated=(NODES, PODS, PLACEMENTS))
    for e in events:
        follower.take(e.envelope, e.position)  # received, not folded: gated
    return follower


def _state(view: ClusterView) -> object:
    return ({n: [p.pod.metadata.uid for p in info.pods] for n, info in view.nodes.items()},
            {n: [p.uid for p in view.nominator().nominated_pods_for_node(n)]
             for n in view.nominator().nodes_with_nominations()},
            dict(view.placed), view.positions)


def _watermark(events: list[ReceivedEvent], keep: float) -> dict[str, list[int]]:
    """A prefix of each partition (as a request made while the log grew names)."""
    ends: dict[str, dict[int, int]] = {}
    for e in events:
        ends.setdefault(e.position.topic, {})[e.position.partition] = e.position.offset + 1
    return {t: [int(ends[t].get(p, 0) * keep) for p in range(max(ends[t]) + 1)] for t in ends}


async def test_a_gated_fold_stops_exactly_at_the_watermark() -> None:
    events = _log(1)
    follower = _follower(events)
    watermark = _watermark(events, 0.5)
    assert await follower.wait_reached(watermark, 0.01)
    assert follower.view.past(watermark) == {} and follower.view.off(watermark) == {}
    for topic, offsets in watermark.items():
        assert [follower.view.positions.get(topic, {}).get(p, 0) for p in range(len(offsets))] == offsets


async def test_folding_everything_received_is_recorded_and_replay_folds_the_same_view() -> None:
    for seed in range(20):
        events = _log(seed)
        follower = _follower(events)
        watermark = _watermark(events, 0.5)
        assert await follower.wait_reached(watermark, 0.01, fold_received=True)
        folded = follower.view.past(watermark)
        assert folded == _watermark(events, 1.0), seed
        replayed = LogFolder(History(events))
        replayed.advance_to(folded)
        assert _state(replayed.view) == _state(follower.view), seed


async def test_the_preemption_service_decides_on_everything_it_has_received() -> None:
    service, follower = build_preemption(load_preemption({}), serve_http=False)
    events = _log(3)
    for e in events:
        follower.take(e.envelope, e.position)
    watermark = _watermark(events, 0.5)
    handler = service.handler
    assert isinstance(handler, PreemptionHandler)
    assert await handler.wait_reached(watermark, 0.01)
    assert handler.view.past(watermark) == _watermark(events, 1.0)
