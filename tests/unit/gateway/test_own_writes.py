"""A read-modify-write of one object waits until the gateway's last write of it is stored."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from services.gateway import own_writes
from services.gateway.own_writes import NotSettled, OwnWrites


async def test_a_second_write_waits_for_the_first_to_be_stored() -> None:
    stored: set[uuid.UUID] = set()

    async def holds(event_id: uuid.UUID) -> bool:
        return event_id in stored

    writes = OwnWrites(holds)
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

    async def never(event_id: uuid.UUID) -> bool:
        return False

    writes = OwnWrites(never)
    writes.published("node-a", uuid.uuid4())
    with pytest.raises(NotSettled, match='"node-a": its last change is not stored yet; please try again'):
        async with writes.settled("node-a"):
            raise AssertionError("the block must not run")
    assert writes.held() == 0
    async with writes.settled("node-b"):
        pass  # an object this gateway did not write goes ahead at once
