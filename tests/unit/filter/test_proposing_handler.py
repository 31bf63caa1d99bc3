"""The filter worker answers a proposing request with decisions only where its view is the
queue's (exactly at the request's watermark); past it, with the walks, which the queue decides."""

from __future__ import annotations

from collections.abc import Mapping

from services.filter.handlers import FilterHandler
from services.runtime.scheduler_config import profiles_from
from shared.cluster import ClusterView
from shared.events import (
    NODES,
    PODS,
    FilterBatchRequested,
    NodeUpserted,
    PodSubmitted,
    Position,
    ShardFiltered,
    envelope,
)
from tests.unit.events.samples import make_node, make_pod

from .support import PARTITIONS, answer, reached


def _view() -> ClusterView:
    """Two nodes with room for two 1-cpu pods each and three such pods pending, each event at its
    position."""
    view = ClusterView()
    for i, name in enumerate(("node-a", "node-b")):
        view.apply(envelope(NodeUpserted(node=make_node(name, cpu="2")), producer="t"), Position(NODES, 0, i))
    for i in range(3):
        pod = make_pod(f"web-{i}", cpu="1", scheduler_name="default-scheduler")
        view.apply(envelope(PodSubmitted(pod=pod), producer="t"), Position(PODS, 0, i))
    return view


async def _answer(handler: FilterHandler, view: ClusterView, watermark: dict[str, list[int]]) -> ShardFiltered:
    pods = [view.specs[f"uid-web-{i}"] for i in range(3)]
    return await answer(handler, FilterBatchRequested(batch_id="batch-1", cycle=1, phase="filter", pods=pods,
                                                      starts=[0, 0, 0], watermark=watermark, whole=True,
                                                      propose=True, seeds=[1, 2, 3]))


async def test_a_worker_at_the_watermark_answers_with_each_pods_placement() -> None:
    view = _view()
    handler = FilterHandler(view, profiles_from(None), reached)
    answer = await _answer(handler, view, view.watermark(PARTITIONS))
    assert answer.proposed
    placed = [r.ranked[0] for r in answer.results]
    # Each pod was placed before the next was decided: no node was given a third pod.
    assert sorted(placed) == ["node-a", "node-a", "node-b"] or sorted(placed) == ["node-a", "node-b", "node-b"]
    assert view.assumed == {}, "the worker's placements do not outlive the answer"


async def test_a_worker_past_the_watermark_answers_with_the_walks() -> None:
    view = _view()
    handler = FilterHandler(view, profiles_from(None), reached)
    watermark = view.watermark(PARTITIONS)
    view.apply(envelope(NodeUpserted(node=make_node("node-c")), producer="t"), Position(NODES, 0, 2))
    answer = await _answer(handler, view, watermark)
    assert not answer.proposed and answer.folded
    assert all(not r.ranked for r in answer.results)
    assert {n for r in answer.results for n in r.feasible} == {"node-a", "node-b", "node-c"}


async def test_a_worker_short_of_the_watermark_says_where_it_is() -> None:
    # Its wait for the queue's events ran out: the answer names the positions it evaluated at.
    view = _view()
    watermark = view.watermark(PARTITIONS)
    watermark[PODS] = [watermark[PODS][0] + 2]  # two submissions it has not received

    async def stalled(watermark: Mapping[str, list[int]], timeout: float) -> bool:
        return False

    answer = await _answer(FilterHandler(view, profiles_from(None), stalled), view, watermark)
    assert not answer.proposed and answer.folded == view.watermark(PARTITIONS)
