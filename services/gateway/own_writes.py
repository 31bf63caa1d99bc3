"""Reading one's own writes for read-modify-write requests (patch, replace) of one object.

The read model follows the log: an object patched twice in quick succession (`kubectl cordon`, then
`kubectl label`) would have its second patch applied to the object as it was before the first, and
publish that whole object, undoing the first. So the gateway remembers, per object key, the last
event it published, and a read-modify-write of that object first waits (up to SETTLE_S, then it is
refused: `NotSettled`) until the event store holds it; a lock per key keeps two such requests from
reading the same state. This holds within one gateway; writes made through another gateway are
still caught by resourceVersion preconditions (versions.py) when the client sends one.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

from shared.errors import Conflict


class NotSettled(Conflict):
    """The gateway's last write of the object was not stored within SETTLE_S: a read-modify-write
    on the state before it would undo it, so the request is refused (409) for the client to retry."""

    def __init__(self, key: str) -> None:
        super().__init__(f'Operation cannot be fulfilled on "{key}": its last change is not stored yet; '
                         "please try again")


SETTLE_S = 5.0
POLL_S = 0.02
REMEMBERED = 10_000
"""Keys remembered at most (the oldest forgotten first): a write older than that is long stored."""


class OwnWrites:
    def __init__(self, holding: Callable[[Sequence[uuid.UUID]], Awaitable[set[uuid.UUID]]]) -> None:
        self._holding = holding
        """Those of the ids asked about the event store holds."""
        self._last: dict[str, uuid.UUID] = {}
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}
        """Each key's lock and how many requests hold or wait for it (forgotten at none)."""

    async def readable(self, event_ids: Sequence[uuid.UUID], within_s: float) -> bool:
        """Wait until the event store holds every one of `event_ids` (the read model is stored
        with it), at most `within_s`; whether it does."""
        deadline = time.monotonic() + within_s
        waiting = list(event_ids)
        while waiting:  # those stored are not asked about again
            stored = await self._holding(waiting)
            waiting = [event_id for event_id in waiting if event_id not in stored]
            if not waiting:
                break
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(POLL_S)
        return True

    def held(self) -> int:
        """Keys a request holds or waits for now."""
        return len(self._locks)

    def published(self, key: str, event_id: uuid.UUID) -> None:
        self._last.pop(key, None)
        self._last[key] = event_id
        while len(self._last) > REMEMBERED:
            self._last.pop(next(iter(self._last)))

    @contextlib.asynccontextmanager
    async def settled(self, key: str) -> AsyncIterator[None]:
        """Hold `key` while the block reads, checks and publishes it, once its last write is stored."""
        lock, users = self._locks.get(key, (asyncio.Lock(), 0))
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                pending = self._last.get(key)
                deadline = time.monotonic() + SETTLE_S
                while pending is not None and not await self._holding([pending]):
                    if time.monotonic() >= deadline:
                        raise NotSettled(key)
                    await asyncio.sleep(POLL_S)
                yield
        finally:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)
