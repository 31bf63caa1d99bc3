"""The ProjectionStore contract, for the in-memory store and the Postgres store alike."""

from __future__ import annotations

import msgspec
import pytest

from shared.adapters.memory import MemoryProjectionStore
from shared.adapters.postgres import PostgresProjectionStore
from shared.events import Position, ReceivedEvent, TopicRegistry
from shared.ports import ProjectionStore
from shared.projection import fold
from tests.unit.events.samples import lifecycle, received

REGISTRY = TopicRegistry()


@pytest.fixture(params=["memory", pytest.param("postgres", marks=pytest.mark.integration)])
def store(request: pytest.FixtureRequest) -> ProjectionStore:
    if request.param == "memory":
        return MemoryProjectionStore()
    return PostgresProjectionStore(request.getfixturevalue("engine"))


def _received(n_pods: int = 4) -> list[ReceivedEvent]:
    return received(lifecycle(n_pods=n_pods), REGISTRY)


async def test_apply_then_load_equals_fold(store: ProjectionStore) -> None:
    events = _received()
    result = await store.apply("g", events)
    assert (result.applied, result.duplicates, result.stale) == (len(events), 0, 0)
    assert await store.load() == fold(e.envelope for e in events)


async def test_positions_advance_per_partition_and_group(store: ProjectionStore) -> None:
    events = _received()
    await store.apply("g", events[:10])
    expected: dict[tuple[str, int], int] = {}
    for e in events[:10]:
        expected[(e.position.topic, e.position.partition)] = e.position.offset + 1
    assert await store.positions("g", list(expected) + [("decisions", 9)]) == expected
    assert await store.positions("other", list(expected)) == {}


async def test_redelivered_batch_changes_nothing(store: ProjectionStore) -> None:
    events = _received()
    await store.apply("g", events)
    before = await store.load()
    again = await store.apply("g", events)
    assert (again.applied, again.stale) == (0, len(events))
    assert await store.load() == before


async def test_republished_event_is_a_duplicate(store: ProjectionStore) -> None:
    events = _received()
    await store.apply("g", events)
    before = await store.load()
    last = events[-1]
    republished = msgspec.structs.replace(last, position=Position(last.position.topic, last.position.partition, 10_000))
    result = await store.apply("g", [republished])
    assert (result.applied, result.duplicates) == (0, 1)
    assert await store.load() == before
    tp = (last.position.topic, last.position.partition)
    assert (await store.positions("g", [tp]))[tp] == 10_001


async def test_a_second_group_does_not_apply_twice(store: ProjectionStore) -> None:
    events = _received()
    await store.apply("g", events)
    before = await store.load()
    result = await store.apply("replayer", events)
    assert (result.applied, result.duplicates, result.stale) == (0, len(events), 0)
    assert await store.load() == before


async def test_batches_split_anywhere_give_the_same_model(store: ProjectionStore) -> None:
    events = _received()
    for start in range(0, len(events), 7):
        await store.apply("g", events[start:start + 7])
    assert await store.load() == fold(e.envelope for e in events)
