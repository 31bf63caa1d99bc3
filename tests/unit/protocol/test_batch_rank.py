"""Ranking a pod's feasible nodes from plain totals picks exactly what ranking from per-node score
objects picks (the queue and replay rank without recording; explain and what-ifs record)."""

from __future__ import annotations

import random

import pytest

from shared.events import ExtenderAnswer
from shared.framework.snapshot import Snapshot
from shared.profiles import build_profiles
from shared.protocol.batch import BatchItem, first_still_fitting, rank
from shared.protocol.sharded import MergedFilter
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
    calls = []
    run = fwk.run_pre_filter_plugins
    fwk.run_pre_filter_plugins = lambda state, p: calls.append(p) or run(state, p)  # type: ignore[method-assign]
    snapshot = fwk.snapshot()
    assert first_still_fitting(fwk, pod, snapshot, ["gone", "n0", "n1"]) == "n1"  # n0 holds a green pod
    assert len(calls) == 1
    assert first_still_fitting(fwk, pod, snapshot, ["n0"]) == ""
