"""Ranking a pod's feasible nodes from plain totals picks exactly what ranking from per-node score
objects picks (the queue and replay rank without recording; explain and what-ifs record)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from shared.cluster import ClusterView, point_at
from shared.events import ExtenderAnswer, NodeUpserted, PodSubmitted
from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import MAX_NODE_SCORE, NodeScore, PreFilterResult, ScoreExtensions, ScorePlugin
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.snapshot import Snapshot
from shared.framework.status import Status
from shared.profiles import build_profiles
from shared.protocol.batch import BatchItem, decide_batch, first_still_fitting, rank
from shared.protocol.sharded import MergedFilter
from shared.protocol.shared_totals import SharedTotals
from tests.builders import MakeNode, MakePod


@pytest.mark.parametrize("seed", range(25))
def test_ranking_from_totals_equals_ranking_from_score_objects(seed: int) -> None:
    rng = random.Random(seed)
    fwk = build_profiles(None)["default-scheduler"]
    nodes = [MakeNode().name(f"n{i}").label("zone", f"z{i % 3}").capacity(cpu=str(rng.choice([2, 4, 8])),
                                                                           memory="16Gi", pods="110").info()
             for i in range(rng.randrange(2, 40))]
    snapshot = Snapshot(nodes)
    fwk.set_snapshot(snapshot)
    pod = MakePod().name("p").uid("uid-p").req(cpu="100m").info()
    feasible = [n.name for n in nodes if rng.random() < 0.8] or [nodes[0].name, nodes[1].name]
    # Coarse raw scores, so ties are common and the seeded pick and the stable order matter.
    raw = {pl.name: {n: rng.choice([0, 50, 100]) for n in feasible} for pl in fwk.score_plugins}
    answers = [ExtenderAnswer(extender="http://x", verb="prioritize", weight=2,
                              scores={n: rng.randrange(3) for n in feasible})] if seed % 2 else []
    item = BatchItem(fwk, pod, MergedFilter(feasible=list(feasible)), raw, seed, answers)
    fast, _, fast_error = rank(item, snapshot)
    recorded, scores, error = rank(item, snapshot, record=True)
    assert (fast, fast_error) == (recorded, error)
    assert scores and len(fast) == min(len(feasible), 4)


def test_the_first_still_fitting_candidate_runs_prefilter_once() -> None:
    fwk = build_profiles(None)["default-scheduler"]
    green = MakePod.term("kubernetes.io/hostname", {"color": "green"})
    placed = MakePod().name("a").uid("uid-a").label("color", "green").node("n0").req(cpu="100m").info()
    nodes = [MakeNode().name("n0").label("kubernetes.io/hostname", "n0").capacity(cpu="4", memory="16Gi", pods="110")
             .info(placed),
             MakeNode().name("n1").label("kubernetes.io/hostname", "n1").capacity(cpu="4", memory="16Gi", pods="110")
             .info()]
    fwk.set_snapshot(Snapshot(nodes))
    pod = MakePod().name("b").uid("uid-b").label("color", "green").pod_anti_affinity(green).req(cpu="100m").info()
    calls: list[PodInfo] = []
    run = fwk.run_pre_filter_plugins

    def counted(state: CycleState, pod: PodInfo) -> tuple[PreFilterResult | None, Status | None, set[str]]:
        calls.append(pod)
        return run(state, pod)

    fwk.run_pre_filter_plugins = counted  # type: ignore[method-assign]  # counts the calls
    snapshot = fwk.snapshot()
    assert first_still_fitting(fwk, pod, snapshot, ["gone", "n0", "n1"]) == "n1"  # n0 holds a green pod
    assert len(calls) == 1
    assert first_still_fitting(fwk, pod, snapshot, ["n0"]) == ""


def _shared_answer_pods(rng: random.Random, n: int) -> list[PodInfo]:
    """Pods one walk answers alike, of kinds whose totals read the view (spread and affinity
    scoring) or read their columns alone, and some that make later pods' affinity scoring count."""
    web = MakePod.term("zone", {"app": "web"})
    pods = []
    for i in range(n):
        pod = MakePod().name(f"p{i}").uid(f"uid-p{i}").label("app", "web").req(cpu="100m")
        kind = rng.choice(["plain", "plain", "plain", "spread", "prefers-apart"])
        if kind == "spread":
            pod = pod.spread(1, "zone", when="ScheduleAnyway", selector={"matchLabels": {"app": "web"}})
        elif kind == "prefers-apart":
            pod = pod.pod_anti_affinity(web, weight=rng.choice([1, 50]))
        pods.append(pod.info())
    return pods


def _zoned_view(nodes: int, *, cpu: str) -> tuple[ClusterView, datetime]:
    """A view of `nodes` nodes of `cpu` each over three zones, and the time they were added."""
    view = ClusterView()
    now = datetime.now(UTC)
    for i in range(nodes):
        node = MakeNode().name(f"n{i}").label("zone", f"z{i % 3}").capacity(cpu=cpu, memory="16Gi", pods="110")
        view.apply_payload(NodeUpserted(node=node.obj()), now)
    return view, now


class _ReadsTheView(ScoreExtensions):
    """A NormalizeScore whose answer moves with every pod placed: totals that must not be shared."""

    def __init__(self, placed: list[int]) -> None:
        self.placed = placed

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        for i, ns in enumerate(scores):
            ns.score = (ns.score + len(self.placed) * 7 * (i % 2)) % (MAX_NODE_SCORE + 1)
        return None


@pytest.mark.parametrize("normalize_reads_the_view", [False, True])
@pytest.mark.parametrize("seed", range(20))
def test_pods_sharing_an_answer_rank_as_each_ranked_alone(seed: int, normalize_reads_the_view: bool) -> None:
    rng = random.Random(seed)
    profiles = build_profiles(None)
    fwk = profiles["default-scheduler"]
    placed: list[int] = []
    if normalize_reads_the_view:
        extensions = _ReadsTheView(placed)
        fit = fwk.plugins["NodeResourcesFit"]
        assert isinstance(fit, ScorePlugin)
        fit.score_extensions = lambda: extensions  # type: ignore[method-assign]  # its normalize reads the view
    view, now = _zoned_view(rng.randrange(3, 30), cpu="8")
    pods = _shared_answer_pods(rng, 12)
    for p in pods:
        view.apply_payload(PodSubmitted(pod=p.pod), now)
    point_at(profiles.values(), view)
    feasible = [name for name in view.snapshot().names if rng.random() < 0.8] or list(view.snapshot().names[:2])
    raw = {pl.name: {n: rng.choice([0, 50, 100]) for n in feasible} for pl in fwk.score_plugins}
    shared = SharedTotals()
    for k, pod in enumerate(pods):
        item = BatchItem(fwk, pod, MergedFilter(feasible=list(feasible)), raw, seed * 100 + k)
        ranked = rank(item, view.snapshot(), shared=shared)
        assert ranked == rank(item, view.snapshot())
        view.assume(pod.uid, ranked[0][0])
        point_at(profiles.values(), view)
        placed.append(k)


def test_a_shared_ranking_without_score_plugins_or_known_nodes_is_the_unshared_one() -> None:
    profiles = build_profiles(None)
    fwk = profiles["default-scheduler"]
    nodes = [MakeNode().name(f"n{i}").capacity(cpu="4", memory="16Gi", pods="110").info() for i in range(4)]
    snapshot = Snapshot(nodes)
    fwk.set_snapshot(snapshot)
    pod = MakePod().name("p").uid("uid-p").req(cpu="100m").info()
    gone = BatchItem(fwk, pod, MergedFilter(feasible=["x", "y"]), {}, 3)
    assert rank(gone, snapshot, shared=SharedTotals()) == ([], [], "every feasible node has left the view")
    unscored = profiles["default-scheduler"]
    unscored.score_plugins = []  # as a profile with every Score plugin disabled
    item = BatchItem(unscored, pod, MergedFilter(feasible=["n3", "gone", "n1"]), {}, 5)
    assert rank(item, snapshot, shared=SharedTotals()) == rank(item, snapshot)


@pytest.mark.parametrize("seed", range(10))
def test_a_batch_decided_in_slices_sharing_its_rankings_decides_as_one_call(seed: int) -> None:
    """The queue decides a batch a slice at a time, yielding to the loop between slices (its
    follower held back), with one memo of the rankings for the whole batch."""

    def decided(slices: list[int]) -> list[tuple[str, str]]:
        profiles = build_profiles(None)
        fwk = profiles["default-scheduler"]
        view, now = _zoned_view(12, cpu="1")
        pods = [MakePod().name(f"p{k}").uid(f"uid-p{k}").req(cpu="600m").info() for k in range(16)]
        for p in pods:
            view.apply_payload(PodSubmitted(pod=p.pod), now)
        point_at(profiles.values(), view)
        feasible = list(view.snapshot().names)
        raw = {pl.name: {n: (i * 37 + seed) % 3 * 50 for i, n in enumerate(feasible)} for pl in fwk.score_plugins}
        items = [BatchItem(fwk, p, MergedFilter(feasible=list(feasible)), raw, seed * 100 + k)
                 for k, p in enumerate(pods)]

        def assume(uid: str, host: str) -> None:
            view.assume(uid, host)
            point_at(profiles.values(), view)

        shared, at = SharedTotals(), 0
        out: list[tuple[str, str]] = []
        for size in slices:
            part = decide_batch(items[at:at + size], view.snapshot, assume, placed_before=at > 0, shared=shared)
            out += [(d.verdict, d.host) for d in part]
            at += size
        return out

    whole = decided([16])
    assert whole == decided([5, 7, 4]) == decided([1] * 16)
    # One pod fits a node: later pods fall back down their rankings, and some find them all taken.
    assert {verdict for verdict, _ in whole} == {"bind", "retry"}


def test_pods_of_one_spec_run_prescore_once_while_its_outcome_is_the_specs_alone() -> None:
    profiles = build_profiles(None)
    fwk = profiles["default-scheduler"]
    view, now = _zoned_view(6, cpu="8")
    plain = [MakePod().name(f"p{k}").uid(f"uid-p{k}").label("app", "web").req(cpu="100m").info() for k in range(4)]
    apart = MakePod().name("apart").uid("uid-apart").label("app", "web").req(cpu="100m").pod_anti_affinity(
        MakePod.term("zone", {"app": "web"}), weight=10).info()
    for p in [*plain, apart]:
        view.apply_payload(PodSubmitted(pod=p.pod), now)
    point_at(profiles.values(), view)
    ran: list[str] = []
    run = fwk.run_pre_score_plugins

    def recording(state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        ran.append(pod.uid)
        return run(state, pod, nodes)

    fwk.run_pre_score_plugins = recording  # type: ignore[method-assign]  # counts the pods that run PreScore
    feasible = list(view.snapshot().names)
    raw = {pl.name: {n: (i * 50) % 150 for i, n in enumerate(feasible)} for pl in fwk.score_plugins}
    shared = SharedTotals()

    def place(pod: PodInfo) -> None:
        ranked, _, error = rank(BatchItem(fwk, pod, MergedFilter(feasible=feasible), raw, 1), view.snapshot(),
                                shared=shared)
        assert not error
        view.assume(pod.uid, ranked[0])
        point_at(profiles.values(), view)

    for pod in [*plain[:2], apart, *plain[2:]]:
        place(pod)
    # The second plain pod takes the first's ranking; once a pod with preferred anti-affinity is
    # placed, InterPodAffinity scores the plain pods by it, and each runs PreScore again.
    assert ran == ["uid-p0", "uid-apart", "uid-p2", "uid-p3"]
