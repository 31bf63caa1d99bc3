"""A read-modify-write of one object waits until the gateway's last write of it is stored."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence

import pytest

from services.gateway import own_writes
from services.gateway.own_writes import NotSettled, OwnWrites


async def test_a_second_write_waits_for_the_first_to_be_stored() -> None:
    stored: set[uuid.UUID] = set()

    async def holding(event_ids: Sequence[uuid.UUID]) -> set[uuid.UUID]:
        return stored.intersection(event_ids)

    writes = OwnWrites(holding)
    first = uuid.uuid4()
    writes.published("node-a", first)
    entered = asyncio.Event()

    async def second() -> None:
        async with writes.settled("node-a"):
            entered.set()

    task = asyncio.create_task(second())
    await asyncio.sleep(0.1)
    assert not entered.is_set(), "the first write is not stored yet"
    async with writes.settled("node-b"):
        pass  # another object does not wait
    stored.add(first)
    await asyncio.wait_for(task, 1)
    assert entered.is_set() and writes.held() == 0


async def test_a_write_whose_last_change_is_never_stored_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # Going ahead would read the object as it was before that change, and publish it over it.
    monkeypatch.setattr(own_writes, "SETTLE_S", 0.05)

    async def never(event_ids: Sequence[uuid.UUID]) -> set[uuid.UUID]:
        return set()

    writes = OwnWrites(never)
    writes.published("node-a", uuid.uuid4())
    with pytest.raises(NotSettled, match='"node-a": its last change is not stored yet; please try again'):
        async with writes.settled("node-a"):
            raise AssertionError("the block must not run")
    assert writes.held() == 0
    async with writes.settled("node-b"):
        pass  # an object this gateway did not write goes ahead at once


async def test_a_write_is_readable_once_every_event_is_stored_each_asked_about_until_then() -> None:
    ids = [uuid.uuid4() for _ in range(3)]
    stored: set[uuid.UUID] = set()
    asked: list[list[uuid.UUID]] = []

    async def holding(event_ids: Sequence[uuid.UUID]) -> set[uuid.UUID]:
        asked.append(list(event_ids))
        stored.add(ids[len(asked) - 1])  # the projector stores one more between two questions
        return stored.intersection(event_ids)

    assert await OwnWrites(holding).readable(ids, within_s=1)
    assert asked == [ids, ids[1:], ids[2:]], "one question a poll, about those not stored yet"


async def test_a_write_not_stored_in_time_is_not_readable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(own_writes, "POLL_S", 0.01)
    first, second = uuid.uuid4(), uuid.uuid4()

    async def only_first(event_ids: Sequence[uuid.UUID]) -> set[uuid.UUID]:
        return {first}.intersection(event_ids)

    assert not await OwnWrites(only_first).readable([first, second], within_s=0.05)
    assert await OwnWrites(only_first).readable([first], within_s=0)
