"""The node index (per pod signature, each node's node-local Filter verdict and raw scores in
arrays, the other filters run after them) never changes a decision: clusters large enough that
each attempt walks only part of the nodes, from a rotating start, give the same report with and
without it, preemptions, nominations and messages included."""

from __future__ import annotations

import msgspec
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared.framework.interfaces import MAX_NODE_SCORE, NodeScore
from shared.framework.score_columns import default_normalize
from shared.model.loader import load_objects
from shared.plugins.tainttoleration.helpers import default_normalize_score
from shared.simulation.simulator import Simulator

from .test_memo_equivalence import spec_of


@st.composite
def clusters(draw: st.DrawFn) -> list[dict]:
    docs: list[dict] = []
    n_nodes = draw(st.integers(101, 160))
    full = draw(st.integers(0, 100))  # percent of nodes a low-priority pod fills: preemption's ground
    for i in range(n_nodes):
        cpu = draw(st.sampled_from(["1", "2"]))
        node: dict = {"kind": "Node", "metadata": {"name": f"n{i:03d}", "labels": {"zone": f"z{i % 3}"}},
                      "status": {"allocatable": {"cpu": cpu, "memory": "2Gi", "pods": str(draw(st.integers(1, 4)))}}}
        if draw(st.integers(0, 99)) < full:
            docs.append({"kind": "Pod", "metadata": {"name": f"filler{i:03d}"}, "spec": {
                "nodeName": f"n{i:03d}", "priority": draw(st.sampled_from([0, 50])),
                "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}}]}})
        roll = draw(st.integers(0, 9))
        if roll < 2:
            node["spec"] = {"taints": [{"key": "t", "value": "v", "effect": ["NoSchedule", "PreferNoSchedule"][roll]}]}
        elif roll == 2:
            node["spec"] = {"unschedulable": True}
        docs.append(node)
    specs = st.fixed_dictionaries({
        "cpu": st.sampled_from(["500m", "1", "1500m"]),
        "priority": st.sampled_from([0, 0, 10, 100]),
        "port": st.sampled_from([0, 0, 80]),
        "tolerate": st.booleans(),
        "zone": st.sampled_from([None, None, "z0", "z1"]),
        "spread": st.sampled_from([None, None, "DoNotSchedule", "ScheduleAnyway"]),
        "app": st.sampled_from(["a", "b"]),
    })
    shapes = [draw(specs) for _ in range(3)]  # few shapes: many identical pods
    for i in range(draw(st.integers(20, 70))):
        spec = shapes[draw(st.integers(0, 2))]
        pod_spec = spec_of(spec)
        docs.append({"kind": "Pod", "metadata": {"name": f"p{i:03d}", "labels": {"app": spec["app"]}},
                     "spec": pod_spec})
    return docs


def _report(docs: list[dict], seed: int, indexed: bool) -> bytes:
    sim = Simulator(load_objects(("generated", d) for d in docs), seed=seed)
    for fwk in sim.profiles.values():
        fwk.memoize = indexed  # the index is kept only where node-local results are remembered
    return msgspec.json.encode(sim.run())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(docs=clusters(), seed=st.integers(0, 3))
def test_node_index_changes_no_outcome(docs: list[dict], seed: int) -> None:
    assert _report(docs, seed, indexed=True) == _report(docs, seed, indexed=False)


@given(values=st.lists(st.integers(-50, 1000), max_size=30), reverse=st.booleans())
def test_array_normalize_is_the_default_normalize(values: list[int], reverse: bool) -> None:
    scores = [NodeScore(str(i), v) for i, v in enumerate(values)]
    default_normalize_score(MAX_NODE_SCORE, reverse, scores)
    got = default_normalize(MAX_NODE_SCORE, reverse, np.array(values, dtype=np.int64))
    assert got.tolist() == [s.score for s in scores]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(docs=clusters(), seed=st.integers(0, 3))
def test_a_filter_error_after_the_index_is_raised_where_the_walk_meets_it(docs: list[dict], seed: int) -> None:
    """PodTopologySpread answering Error in one zone (its verdict asked once per zone): the indexed
    walk fails the attempt exactly when, and with the error that, the sequential walk does."""
    from unittest import mock

    from shared.framework.status import Code, Status
    from shared.plugins.podtopologyspread.plugin import PodTopologySpread

    real = PodTopologySpread.filter

    def flaky(self, state, pod, node_info):  # type: ignore[no-untyped-def]
        verdict = real(self, state, pod, node_info)
        if node_info.labels.get("zone") == "z2" and verdict is None:
            return Status(Code.ERROR, f"zone z2 unreachable for {pod.pod.metadata.name}")
        return verdict

    with mock.patch.object(PodTopologySpread, "filter", flaky):
        assert _report(docs, seed, indexed=True) == _report(docs, seed, indexed=False)
