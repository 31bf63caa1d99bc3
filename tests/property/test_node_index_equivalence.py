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

from .clusters import large_clusters


def _report(docs: list[dict], seed: int, indexed: bool) -> bytes:
    sim = Simulator(load_objects(("generated", d) for d in docs), seed=seed)
    for fwk in sim.profiles.values():
        fwk.memoize = indexed  # the index is kept only where node-local results are remembered
    return msgspec.json.encode(sim.run())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(docs=large_clusters(), seed=st.integers(0, 3))
def test_node_index_changes_no_outcome(docs: list[dict], seed: int) -> None:
    assert _report(docs, seed, indexed=True) == _report(docs, seed, indexed=False)


@given(values=st.lists(st.integers(-50, 1000), max_size=30), reverse=st.booleans())
def test_array_normalize_is_the_default_normalize(values: list[int], reverse: bool) -> None:
    scores = [NodeScore(str(i), v) for i, v in enumerate(values)]
    default_normalize_score(MAX_NODE_SCORE, reverse, scores)
    got = default_normalize(MAX_NODE_SCORE, reverse, np.array(values, dtype=np.int64))
    assert got.tolist() == [s.score for s in scores]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(docs=large_clusters(), seed=st.integers(0, 3))
def test_a_filter_error_after_the_index_is_raised_where_the_walk_meets_it(docs: list[dict], seed: int) -> None:
    """PodTopologySpread answering Error in one zone (its verdict asked once per zone): the indexed
    walk fails the attempt exactly when, and with the error that, the sequential walk does."""
    from unittest import mock

    from shared.framework.status import Code, Status
    from shared.plugins.podtopologyspread.plugin import PodTopologySpread

    real = PodTopologySpread.filter

    def flaky(self, state, pod, node_info):
        verdict = real(self, state, pod, node_info)
        if node_info.labels.get("zone") == "z2" and verdict is None:
            return Status(Code.ERROR, f"zone z2 unreachable for {pod.pod.metadata.name}")
        return verdict

    with mock.patch.object(PodTopologySpread, "filter", flaky):
        assert _report(docs, seed, indexed=True) == _report(docs, seed, indexed=False)
