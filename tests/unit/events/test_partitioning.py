"""The pure partitioner agrees with the Kafka client's, so filter workers know their shard's nodes."""

from __future__ import annotations

import random

import pytest
from aiokafka.partitioner import murmur2 as client_murmur2

from shared.events.partitioning import murmur2, partition_for


def test_murmur2_matches_the_client() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40)))
        assert murmur2(data) & 0x7FFFFFFF == client_murmur2(data) & 0x7FFFFFFF


@pytest.mark.parametrize("key", ["n1", "node-0042", "kind-worker", ""])
def test_partition_for_is_the_client_default(key: str) -> None:
    assert partition_for(key, 16) == (client_murmur2(key.encode()) & 0x7FFFFFFF) % 16
