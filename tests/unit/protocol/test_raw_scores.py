"""The shards' raw scores as columns read exactly as the plugin → node → score mapping they stand
for, and the array pick among totals is the list-order pick it stands for."""

from __future__ import annotations

import heapq
import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.events import PodShardResult
from shared.protocol.answers import decode_walk
from shared.protocol.raw_scores import RawScores
from shared.protocol.sharded import raw_by_plugin
from shared.protocol.shared_totals import MAX_FALLBACKS, Ranking


def _reference_merge(results: list[PodShardResult]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for r in results:
        for plugin, column in r.scores.items():
            out.setdefault(plugin, {}).update(zip(r.feasible, column))
    return out


def _reference_pick(names: list[str], totals: list[int], seed: int) -> list[str]:
    best = max(totals)
    ties = [i for i, t in enumerate(totals) if t == best]
    if len(ties) == 1:
        host, drawn = ties[0], []
    else:
        rng = random.Random(seed)
        host = ties[rng.randrange(len(ties))]
        others = [i for i in ties if i != host]
        drawn = rng.sample(others, min(MAX_FALLBACKS, len(others)))
    below = (i for i in range(len(names)) if totals[i] != best)
    rest = drawn + heapq.nsmallest(MAX_FALLBACKS - len(drawn), below, key=lambda i: -totals[i])
    return [names[host], *(names[i] for i in rest)]


shard_results = st.lists(
    st.tuples(st.integers(0, 6), st.sets(st.sampled_from(["A", "B", "C"]))), min_size=1, max_size=4,
)


@settings(max_examples=200, deadline=None)
@given(shards=shard_results, seed=st.integers(0, 10**6))
def test_columns_read_as_the_merged_mapping(shards: list[tuple[int, set[str]]], seed: int) -> None:
    rng = random.Random(seed)
    results, taken = [], 0
    for size, plugins in shards:
        feasible = [f"n{taken + i}" for i in range(size)]
        taken += size
        results.append(PodShardResult(pod_uid="u", feasible=feasible, scored=True,
                                      scores={p: [rng.randrange(-5, 200) for _ in feasible] for p in sorted(plugins)}))
    raw, error = raw_by_plugin([decode_walk(r) for r in results])
    expected = _reference_merge(results)
    assert not error
    assert {p: dict(raw[p]) for p in raw} == expected
    everyone = [f"n{i}" for i in range(taken + 2)]  # two nodes no shard answered for
    rng.shuffle(everyone)
    asked = everyone[: rng.randrange(len(everyone) + 1)]
    for scores in (raw, RawScores.of_mapping(expected)):
        rows = scores.rows(asked)
        for plugin in ["A", "B", "C"]:
            got = scores.column(plugin, rows, len(asked)).tolist()
            assert got == [expected.get(plugin, {}).get(n, 0) for n in asked]


def test_the_answered_nodes_in_order_need_no_lookup() -> None:
    raw = RawScores(["a", "b"], {"P": np.array([3, 4], dtype=np.int64)})
    assert raw.rows(["a", "b"]) is None
    assert raw.column("P", None, 2).tolist() == [3, 4]
    assert raw.column("Q", None, 2).tolist() == [0, 0]
    rows = raw.rows(["b", "x"])
    assert rows is not None and rows.tolist() == [1, -1]


def test_a_scoring_error_is_the_first_shards() -> None:
    results = [PodShardResult(pod_uid="u", feasible=["a"], scores={"P": [1]}, scored=True),
               PodShardResult(pod_uid="u", score_error="boom", scored=True)]
    raw, error = raw_by_plugin([decode_walk(r) for r in results])
    assert error == "boom" and len(raw) == 0


@settings(max_examples=300, deadline=None)
@given(totals=st.lists(st.integers(0, 4), min_size=1, max_size=40), seed=st.integers(0, 2**32))
def test_array_pick_is_the_sorted_order_pick(totals: list[int], seed: int) -> None:
    names = [f"n{i}" for i in range(len(totals))]
    assert Ranking.of(names, np.array(totals, dtype=np.int64)).pick(seed) == _reference_pick(names, totals, seed)


@settings(max_examples=200, deadline=None)
@given(totals=st.lists(st.integers(0, 4), min_size=1, max_size=40), seed=st.integers(0, 2**32))
def test_fallbacks_are_the_next_best_totals(totals: list[int], seed: int) -> None:
    names = [f"n{i}" for i in range(len(totals))]
    picked = Ranking.of(names, np.array(totals, dtype=np.int64)).pick(seed)
    got = [totals[names.index(n)] for n in picked]
    assert len(set(picked)) == len(picked) == min(len(totals), MAX_FALLBACKS + 1)
    assert got == sorted(got, reverse=True) and got[0] == max(totals)
    left = [t for n, t in zip(names, totals) if n not in picked]
    assert not left or min(got) >= max(left)


def test_pods_sharing_equal_totals_fall_back_to_different_nodes() -> None:
    # 500 equally good nodes, 100 pods with their own seeds: the fallbacks spread as the picks do,
    # so pods of one batch that share a ranking do not all fall back to the first nodes walked.
    names = [f"n{i}" for i in range(500)]
    ranking = Ranking.of(names, np.zeros(500, dtype=np.int64))
    fallbacks = [n for seed in range(100) for n in ranking.pick(seed)[1:]]
    assert len(fallbacks) == 300 and len(set(fallbacks)) > 200


@settings(max_examples=200, deadline=None)
@given(totals=st.lists(st.integers(0, 4), min_size=1, max_size=40), seed=st.integers(0, 2**32))
def test_the_pick_is_the_seeded_draw_among_the_best_totals(totals: list[int], seed: int) -> None:
    # The first node is what the in-process scheduler picks: one draw of the seed's generator.
    names = [f"n{i}" for i in range(len(totals))]
    ties = [i for i, t in enumerate(totals) if t == max(totals)]
    first = ties[0] if len(ties) == 1 else ties[random.Random(seed).randrange(len(ties))]
    assert Ranking.of(names, np.array(totals, dtype=np.int64)).pick(seed)[0] == names[first]
