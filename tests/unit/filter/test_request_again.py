"""A request the worker evaluates a second time (the queue sent it again after the gather timeout,
or it was redelivered), on a view that moved meanwhile, is answered as a worker that never saw it
would answer: nothing of the first evaluation's cycle state is carried into the second."""

from __future__ import annotations

from services.filter.handlers import FilterHandler
from services.runtime.scheduler_config import profiles_from
from shared.cluster import ClusterView
from shared.events import NODES, PODS, FilterBatchRequested, NodeUpserted, PodBound, PodSubmitted, Position, envelope
from tests.builders import MakePod
from tests.unit.events.samples import make_node, make_pod

from .support import PARTITIONS, answer, reached


async def test_a_batch_evaluated_again_on_a_moved_view_is_answered_afresh() -> None:
    view = ClusterView()
    for i, (name, zone) in enumerate((("node-a", "a"), ("node-b", "b"))):
        view.apply(envelope(NodeUpserted(node=make_node(name, zone=zone)), producer="t"), Position(NODES, 0, i))
    web = make_pod("web-0", cpu="1", scheduler_name="default-scheduler")
    view.apply(envelope(PodSubmitted(pod=web), producer="t"), Position(PODS, 0, 0))
    handler = FilterHandler(view, profiles_from(None), reached)
    request = FilterBatchRequested(batch_id="batch-1", cycle=1, phase="filter", pods=[web], starts=[0],
                                   watermark=view.watermark(PARTITIONS), whole=True)
    first = await answer(handler, request, 0)

    # A pod that keeps pods labelled app=web out of its zone starts running on node-a: InterPodAffinity,
    # which had nothing to check for web-0 before, now rules node-a out.
    guard = (MakePod().name("guard").uid("uid-guard").node("node-a").req(cpu="100m")
             .pod_anti_affinity(MakePod.term("topology.kubernetes.io/zone", {"app": "web"})).obj())
    view.apply(envelope(PodSubmitted(pod=guard), producer="t"), Position(PODS, 0, 1))
    view.apply(envelope(PodBound(pod_uid="uid-guard", node_name="node-a", attempt_id="a-1"), producer="t"))
    again = FilterBatchRequested(batch_id="batch-1", cycle=1, phase="filter", pods=[web], starts=[0],
                                 watermark=view.watermark(PARTITIONS), whole=True)
    second = await answer(handler, again, 1)
    fresh = await answer(FilterHandler(view, profiles_from(None), reached), again, 1)
    assert second.results == fresh.results
    assert first.results != fresh.results
