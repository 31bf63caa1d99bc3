"""The pods of a batch that share one walk are ranked with the node-local scores of the nodes the
pods before them were placed on read again, so they spread as one scheduler deciding them in turn
spreads them, and every decider of the batch (the queue, replay, explain) decides alike."""

from __future__ import annotations

import random
from collections import Counter
from datetime import UTC, datetime

import pytest

from shared.cluster import ClusterView, point_at
from shared.events import NodeUpserted, PodSubmitted
from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import MAX_NODE_SCORE, ScoreExtensions, ScorePlugin
from shared.framework.pod_info import PodInfo
from shared.framework.runtime import Framework
from shared.profiles import build_profiles
from shared.protocol.batch import BatchItem, Decision, decide_batch
from shared.protocol.sharded import MergedFilter
from shared.protocol.shared_totals import SharedTotals
from tests.builders import MakeNode, MakePod


def _view(nodes: int, rng: random.Random) -> ClusterView:
    view = ClusterView()
    now = datetime.now(UTC)
    for i in range(nodes):
        node = MakeNode().name(f"n{i}").label("zone", f"z{i % 3}").capacity(
            cpu=str(rng.choice([4, 8])), memory="16Gi", pods="110")
        view.apply_payload(NodeUpserted(node=node.obj()), now)
    return view


def _pods(count: int, prefix: str = "p") -> list[PodInfo]:
    """Pods alike but for their names: one walk answers them all."""
    return [MakePod().name(f"{prefix}{i}").uid(f"uid-{prefix}{i}").req(cpu="500m", memory="1Gi").info()
            for i in range(count)]


def _walk(fwk: Framework, pod: PodInfo, view: ClusterView, feasible: list[str]) -> dict[str, dict[str, int]]:
    """The raw scores a filter worker's walk takes on `view`, before any pod of the batch is placed."""
    snapshot = view.snapshot()
    infos = [info for info in snapshot.node_info_list if info.name in feasible]
    state = CycleState()
    assert fwk.run_pre_score_plugins(state, pod, infos) is None
    columns, status = fwk.run_raw_score_plugins(state, pod, infos)
    assert status is None
    return {plugin: dict(zip([i.name for i in infos], values)) for plugin, values in columns}


def _decide(view: ClusterView, items: list[BatchItem], *, record: bool, shared: SharedTotals | None = None,
            placed_on: list[str] | None = None) -> list[Decision]:
    profiles = {"default-scheduler": items[0].fwk}

    def assume(uid: str, host: str) -> None:
        view.assume(uid, host)
        point_at(profiles.values(), view)

    return decide_batch(items, view.snapshot, assume, record=record, shared=shared,
                        placed_before=bool(placed_on), placed_on=placed_on or ())


class _DefaultNormalized(ScoreExtensions):
    DEFAULT_NORMALIZE = (MAX_NODE_SCORE, False)


def _batch(seed: int, nodes: int, pods: int, *, fit_normalizes: bool = False) -> tuple[ClusterView, list[BatchItem]]:
    rng = random.Random(seed)
    fwk = build_profiles(None)["default-scheduler"]
    if fit_normalizes:  # a changed score then moves every node's: the ranking is made again whole
        fit = fwk.plugins["NodeResourcesFit"]
        assert isinstance(fit, ScorePlugin)
        fit.score_extensions = lambda: _DefaultNormalized()  # type: ignore[method-assign]  # it normalizes
        fwk.score_weights["NodeResourcesFit"] = 3
    view = _view(nodes, rng)
    infos = _pods(pods)
    for info in infos:
        view.apply_payload(PodSubmitted(pod=info.pod), datetime.now(UTC))
    point_at([fwk], view)
    feasible = [n for n in view.snapshot().names if rng.random() < 0.9] or list(view.snapshot().names)
    raw = _walk(fwk, infos[0], view, feasible)
    return view, [BatchItem(fwk, info, MergedFilter(feasible=list(feasible)), raw, seed * 1000 + k)
                  for k, info in enumerate(infos)]


def test_pods_sharing_a_walk_spread_as_one_scheduler_would() -> None:
    # Eight equal nodes, sixteen pods: LeastAllocated puts two on each, where ranking every pod
    # by the walk's scores (taken on the empty nodes) would put them wherever the ties fell.
    fwk = build_profiles(None)["default-scheduler"]
    view = ClusterView()
    now = datetime.now(UTC)
    for i in range(8):
        view.apply_payload(NodeUpserted(node=MakeNode().name(f"n{i}").capacity(cpu="4", memory="16Gi",
                                                                               pods="110").obj()), now)
    infos = _pods(16)
    for info in infos:
        view.apply_payload(PodSubmitted(pod=info.pod), now)
    point_at([fwk], view)
    feasible = list(view.snapshot().names)
    raw = _walk(fwk, infos[0], view, feasible)
    items = [BatchItem(fwk, info, MergedFilter(feasible=list(feasible)), raw, k) for k, info in enumerate(infos)]
    decided = _decide(view, items, record=False)
    assert Counter(d.host for d in decided) == {f"n{i}": 2 for i in range(8)}


@pytest.mark.parametrize("fit_normalizes", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_the_queue_replay_and_explain_decide_a_batch_alike(seed: int, fit_normalizes: bool) -> None:
    nodes, pods = 3 + seed % 7, 6 + seed
    view, items = _batch(seed, nodes, pods, fit_normalizes=fit_normalizes)
    # The queue: rankings shared, the batch in slices of three with one memo.
    shared = SharedTotals()
    queue: list[Decision] = []
    for at in range(0, len(items), 3):
        queue += _decide(view, items[at:at + 3], record=False, shared=shared)
    hosts = [d.host for d in queue]
    assert all(d.verdict == "bind" for d in queue)
    # Replay, recording scores: the whole batch in one call on a fresh view.
    view, items = _batch(seed, nodes, pods, fit_normalizes=fit_normalizes)
    assert [d.host for d in _decide(view, items, record=True)] == hosts
    # Explain: each pod alone, the batch's earlier pods placed where they went.
    for k in range(len(items)):
        view, items = _batch(seed, nodes, pods, fit_normalizes=fit_normalizes)
        for item, host in zip(items[:k], hosts[:k]):
            view.assume(item.info.uid, host)
        point_at([items[0].fwk], view)
        alone = _decide(view, [items[k]], record=True, placed_on=hosts[:k])
        assert alone[0].host == hosts[k], k
