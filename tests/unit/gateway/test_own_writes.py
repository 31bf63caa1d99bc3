"""A read-modify-write of one object waits until the gateway's last write of it is stored."""

from __future__ import annotations

import asyncio
import uuid

from services.gateway.own_writes import OwnWrites


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
