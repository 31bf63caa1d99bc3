"""Kafka's default partitioner, pure: which partition (node shard) a key lands on.

Producers publish node-keyed events with the client's default partitioner (murmur2 of the key, sign
bit cleared, modulo the partition count). Filter workers must know, without a broker, which nodes
belong to the shard a request arrived on, so the same function lives here; a unit test checks it
against aiokafka's.
"""

from __future__ import annotations

import functools
import struct

_M = 0x5BD1E995
_SEED = 0x9747B28C
_MASK = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """Kafka's murmur2 (Utils.murmur2): a signed 32-bit hash."""
    length = len(data)
    h = (_SEED ^ length) & _MASK
    end = length & ~3
    for k in struct.unpack_from(f"<{end >> 2}I", data):
        k = (k * _M) & _MASK
        k ^= k >> 24
        h = ((h * _M) & _MASK) ^ ((k * _M) & _MASK)
    rest = length & 3
    if rest == 3:
        h ^= data[end + 2] << 16
    if rest >= 2:
        h ^= data[end + 1] << 8
    if rest >= 1:
        h ^= data[end]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def kafka_partition(key: str, partitions: int) -> int:
    """The partition Kafka's default partitioner picks for `key` (toPositive(murmur2) % n)."""
    return (murmur2(key.encode()) & 0x7FFFFFFF) % partitions


partition_for = functools.lru_cache(maxsize=1 << 16)(kafka_partition)
"""`kafka_partition`, remembered: node names come back with every bind and placement."""


def range_runs(partitions: int, members: int) -> list[range]:
    """The partitions Kafka's range assignor gives each of `members` consumers of one topic, in
    member order: contiguous runs, the first `partitions % members` one longer."""
    size, extra = divmod(partitions, members)
    runs, start = [], 0
    for m in range(members):
        end = start + size + (m < extra)
        runs.append(range(start, end))
        start = end
    return runs


def contiguous_share(index: int, count: int, partitions: int) -> range:
    """The `index`-th of `count` contiguous shares of `partitions` partitions."""
    return range(index * partitions // count, (index + 1) * partitions // count)


def shares_hold_whole_runs(count: int, members: int, partitions: int) -> bool:
    """Whether each of `count` contiguous shares is made of whole range-assignor runs of `members`
    consumers: then no consumer holds partitions of two shares."""
    bounds = {r.start for r in range_runs(partitions, members)} | {partitions}
    return all(contiguous_share(k, count, partitions).start in bounds for k in range(count))
