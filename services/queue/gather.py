"""Scatter/gather bookkeeping: which shards have answered a batch's phase, and their answers,
decoded as they arrive (shared.protocol.answers)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from shared.events import NODE_SHARDS, ShardFiltered
from shared.protocol.answers import Answer, decode_all

from .dispatch import Dispatcher


@dataclass
class _Pending:
    covered: set[int] = field(default_factory=set)
    results: dict[str, list[Answer]] = field(default_factory=dict)
    done: asyncio.Event = field(default_factory=asyncio.Event)
    off_view: bool = False
    """An answer was made on a view other than the request's watermark."""


class Gatherer:
    def __init__(self, shards: int = NODE_SHARDS, *, workers_most: int = 0,
                 destinations: Sequence[int] | None = None) -> None:
        """`destinations`: the partitions of `filter-requests` this queue sends to (None: all)."""
        self.shards = shards
        self._pending: dict[tuple[str, str], _Pending] = {}
        self.dispatcher = Dispatcher(shards if destinations is None else destinations, most=workers_most)
        self._off_view: set[str] = set()
        """Filter phases answered, an answer of which was made off the request's watermark: kept
        until the queue asks (`answered_off_view`), right after it gathered them."""

    def expect(self, batch_id: str, phase: str) -> None:
        self._pending[(batch_id, phase)] = _Pending()

    def offer(self, answer: ShardFiltered) -> None:
        """Fold one answer; answers for batches nobody waits for (old, or before a restart) are dropped."""
        self.dispatcher.owned(answer.owned)
        pending = self._pending.get((answer.batch_id, answer.phase))
        if pending is None:
            return
        shards = answer.shards or [answer.shard]
        if set(shards) <= pending.covered:
            return  # a duplicate (redelivery, or two owners during a rebalance)
        pending.covered.update(shards)
        pending.off_view |= bool(answer.folded)
        # Decoded here, once: an answer shared by identical pods is one object for all of them.
        for pod_uid, decoded in zip((r.pod_uid for r in answer.results), decode_all(answer.results)):
            pending.results.setdefault(pod_uid, []).append(decoded)
        if len(pending.covered) >= self.shards:
            pending.done.set()

    def forget(self, batch_id: str, phase: str) -> None:
        """Nobody waits for the phase's answers any more (gathered, or given up)."""
        self._pending.pop((batch_id, phase), None)

    def answered_off_view(self, batch_id: str) -> bool:
        """Whether a worker answered the batch from a view other than its request's watermark (its
        view short of it after the wait ran out, or past it); asked once, when the batch is merged."""
        if batch_id in self._off_view:
            self._off_view.discard(batch_id)
            return True
        return False

    async def wait(self, batch_id: str, phase: str, timeout: float) -> dict[str, list[Answer]] | None:
        """Every shard's answers by pod uid, or None after `timeout` (the caller sends again)."""
        pending = self._pending[(batch_id, phase)]
        try:
            await asyncio.wait_for(pending.done.wait(), timeout)
        except TimeoutError:
            return None
        del self._pending[(batch_id, phase)]
        if pending.off_view and phase == "filter":
            self._off_view.add(batch_id)
        return pending.results
