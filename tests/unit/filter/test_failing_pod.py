"""A pod whose evaluation raises (a plugin's bug) gets an error in the worker's answer; the batch's
other pods are answered as ever. A request left without an answer would be sent again by the
queue, to fail again, and hold its whole batch back for good."""

from __future__ import annotations

from typing import Any

import pytest

from services.filter.handlers import FilterHandler
from services.runtime.scheduler_config import profiles_from
from shared.cluster import ClusterView
from shared.events import NODES, PODS, FilterBatchRequested, NodeUpserted, PodSubmitted, Position, envelope
from shared.framework.cycle_state import CycleState
from shared.framework.pod_info import PodInfo
from tests.unit.events.samples import make_node, make_pod

from .support import PARTITIONS, answer, reached


@pytest.mark.parametrize("propose", [False, True], ids=["walks", "proposals"])
async def test_a_pod_whose_evaluation_raises_is_answered_with_an_error(propose: bool) -> None:
    view = ClusterView()
    view.apply(envelope(NodeUpserted(node=make_node("node-a", cpu="4")), producer="t"), Position(NODES, 0, 0))
    pods = [make_pod(f"web-{i}", cpu="1", scheduler_name="default-scheduler") for i in range(3)]
    for i, pod in enumerate(pods):
        view.apply(envelope(PodSubmitted(pod=pod), producer="t"), Position(PODS, 0, i))
    profiles = profiles_from(None)
    fit = profiles["default-scheduler"].plugins["NodeResourcesFit"]
    pre_filter = fit.pre_filter  # type: ignore[attr-defined]  # NodeResourcesFit has PreFilter

    def broken_for_web_1(state: CycleState, pod: PodInfo, nodes: Any) -> Any:
        if pod.name == "web-1":
            raise ZeroDivisionError("division by zero")
        return pre_filter(state, pod, nodes)

    fit.pre_filter = broken_for_web_1  # type: ignore[attr-defined]  # a plugin with a bug
    handler = FilterHandler(view, profiles, reached)
    request = FilterBatchRequested(batch_id="batch-1", cycle=1, phase="filter", pods=pods, starts=[0, 1, 2],
                                   watermark=view.watermark(PARTITIONS), whole=True, propose=propose,
                                   seeds=[1, 2, 3] if propose else [])
    answered = await answer(handler, request)
    assert not answered.proposed
    by_pod = {r.pod_uid: r for r in answered.results}
    assert by_pod["uid-web-1"].error == "evaluating the pod failed: ZeroDivisionError: division by zero"
    assert not by_pod["uid-web-0"].error and not by_pod["uid-web-2"].error
