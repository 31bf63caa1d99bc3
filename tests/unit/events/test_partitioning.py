"""The pure partitioner agrees with the Kafka client's, so filter workers know their shard's nodes; the
range assignor's runs, so queues sharing a cluster know which workers are whose."""

from __future__ import annotations

import random

import pytest
from aiokafka.partitioner import murmur2 as client_murmur2

from shared.events.partitioning import contiguous_share, murmur2, partition_for, range_runs, shares_hold_whole_runs


def test_murmur2_matches_the_client() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40)))
        assert murmur2(data) & 0x7FFFFFFF == client_murmur2(data) & 0x7FFFFFFF


@pytest.mark.parametrize("key", ["n1", "node-0042", "kind-worker", ""])
def test_partition_for_is_the_client_default(key: str) -> None:
    assert partition_for(key, 16) == (client_murmur2(key.encode()) & 0x7FFFFFFF) % 16


@pytest.mark.parametrize(("members", "runs"), [
    (1, [range(0, 8)]),
    (3, [range(0, 3), range(3, 6), range(6, 8)]),
    (5, [range(0, 2), range(2, 4), range(4, 6), range(6, 7), range(7, 8)]),
])
def test_range_runs_are_the_range_assignors(members: int, runs: list[range]) -> None:
    assert range_runs(8, members) == runs


@pytest.mark.parametrize(("members", "counts"), [
    (1, [1]), (2, [1, 2]), (3, [1]), (4, [1, 2, 4]), (6, [1, 2, 3, 4]), (8, [1, 2, 3, 4]),
])
def test_shares_hold_whole_runs_only_where_no_member_straddles_two(members: int, counts: list[int]) -> None:
    assert [c for c in (1, 2, 3, 4) if shares_hold_whole_runs(c, members, 8)] == counts
    for count in counts:
        shares = [set(contiguous_share(k, count, 8)) for k in range(count)]
        assert all(sum(bool(set(run) & share) for share in shares) == 1 for run in range_runs(8, members))
