"""Follows whole topics without a consumer group and folds every event into a `ClusterView`.

Every scheduling service (queue, filter workers, preemption) needs the whole cluster, not a shard
of it: PreFilter's topology counts span every node. Each reads `nodes`, `pods` and `placements`
from the beginning at start (the view is the fold of the log, so nothing needs storing) and then
follows them. `caught_up` is set once the ends seen at start are reached; `wait_reached` lets a
handler wait until the view has folded what the sender of a request had (its watermark).

Two ways of holding events back keep every decision a function of a named prefix of the log, so
replay can rebuild exactly the state it was made on:
- **gated** topics (filter workers, preemption) are folded only as far as a request's watermark:
  events beyond it wait in a buffer, and `wait_reached` folds exactly up to the watermark, partition
  by partition in a fixed order (replay folds in the same order). The preemption service asks it
  to fold on to everything received (`fold_received`) and records the positions it reached.
- **pause/resume** (the queue): while paused nothing is folded; a cycle then decides on the view its
  requests' watermark names, and what arrived meanwhile is folded, in arrival order, at `resume`.

Some topics a reader needs only to rebuild what it wrote there itself before a restart: it reads
them to the ends they had at start and no further (`until_caught_up`; the queue's decisions and
binds).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable, Collection, Mapping, Sequence

from aiokafka import AIOKafkaConsumer

from shared.adapters.kafka.tail import Tail
from shared.cluster import ClusterView
from shared.events import Envelope, Position, TopicRegistry
from shared.settings import Settings

from .tailing import TailTask

PASS_FETCH_MS = 20
"""On demand, how long a fetch of a pass to the ends waits for records before the pass ends."""


class LogFollower(TailTask):
    def __init__(self, settings: Settings, registry: TopicRegistry, topics: Sequence[str], view: ClusterView,
                 on_event: Callable[[Envelope, Position], None] | None = None, *,
                 gated: Collection[str] = (), on_demand: bool = False, linger_s: float = 0.0,
                 until_caught_up: Collection[str] = ()) -> None:
        # Started over after a failure, it reads on from its positions: the fold skips what it has folded.
        super().__init__(settings, "follow", "following the log")
        self.registry, self.topics, self.view = registry, list(topics), view
        self.on_event = on_event
        self.gated = frozenset(gated)
        self.caught_up = asyncio.Event()
        self._changed = asyncio.Condition()
        self._buffered: dict[tuple[str, int], deque[tuple[Envelope | None, Position]]] = {}
        """Gated events not folded yet, per (topic, partition), in offset order."""
        self._received: dict[str, dict[int, int]] = {}
        """Next offset received per gated partition (folded or buffered)."""
        self._paused = False
        self._held: list[tuple[Envelope | None, Position]] = []
        self.on_demand = on_demand
        """Once caught up, fetch only while a `wait_reached` waits for events not received yet."""
        self._wants: list[Mapping[str, list[int]]] = []
        self._wanted = asyncio.Event()
        self.until_caught_up = tuple(until_caught_up)
        """Topics read only to the ends they had at start (what a reader rebuilds from them)."""
        self.linger_s = linger_s
        """On demand: how long after the last request to go on fetching before pausing."""
        self._last_want = 0.0
        self._idle = False
        """On demand: paused, fetching nothing."""
        self._to_ends = False
        """On demand: a `fold_received` wait wants a pass to the log's ends first."""
        self._passes = 0
        """On demand: passes to the ends completed."""

    async def wait_reached(self, watermark: Mapping[str, list[int]], timeout: float, *,
                           fold_received: bool = False) -> bool:
        """True once the view has folded up to `watermark` (gated topics: exactly up to it, when the
        view is not past it already; with `fold_received`, on to everything received by then, in
        one fold); False after `timeout` seconds. On demand, a paused follower asked to
        `fold_received` first fetches on towards the log's ends, as one fetching all along would
        have received them: until the ends a fetch made meanwhile reports are reached, or a fetch
        finds nothing for PASS_FETCH_MS (so it may stop short; the caller records where it is)."""
        passes = self._passes
        self._last_want = time.monotonic()
        to_ends = self.on_demand and fold_received and self._idle

        def received() -> bool:
            return self._received_up_to(watermark) and (not to_ends or self._passes > passes)

        if not received():
            self._wants.append(watermark)
            self._to_ends |= to_ends
            self._wanted.set()
            try:
                async with self._changed:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._changed.wait_for(received), timeout)
            finally:
                self._wants.remove(watermark)
        if fold_received:
            self._fold_buffered()
        else:
            self.advance_to(watermark)
        return self.view.reached(watermark)

    def advance_to(self, watermark: Mapping[str, list[int]]) -> None:
        """Fold buffered gated events below `watermark`, topic by topic in the followed order, each
        topic's partitions in order."""
        for topic in self.topics:
            if topic not in self.gated:
                continue
            offsets = watermark.get(topic, [])
            for partition, end in enumerate(offsets):
                pending = self._buffered.get((topic, partition))
                while pending and pending[0][1].offset < end:
                    self._fold(*pending.popleft())

    def _fold_buffered(self) -> None:
        """Fold every buffered gated event (each was received), in `advance_to`'s order."""
        for topic in self.topics:
            if topic in self.gated:
                for key in sorted(k for k in self._buffered if k[0] == topic):
                    pending = self._buffered[key]
                    while pending:
                        self._fold(*pending.popleft())

    def pause(self) -> None:
        """Hold every event back until `resume` (the queue, for the length of a cycle)."""
        self._paused = True

    def resume(self) -> None:
        self._paused = False
        held, self._held = self._held, []
        for env, position in held:
            self._fold(env, position)

    def _received_up_to(self, watermark: Mapping[str, list[int]]) -> bool:
        for topic, offsets in watermark.items():
            mine = self._received.get(topic, {}) if topic in self.gated else self.view.positions.get(topic, {})
            if any(mine.get(p, 0) < offset for p, offset in enumerate(offsets)):
                return False
        return True

    def _fold(self, env: Envelope | None, position: Position) -> None:
        at = self.view.positions.setdefault(position.topic, {})
        if position.offset < at.get(position.partition, 0):
            return  # folded already (read again after the reader restarted)
        if env is None:
            at[position.partition] = position.offset + 1
            return
        self.view.apply(env, position)
        if self.on_event is not None:
            self.on_event(env, position)

    def take(self, env: Envelope | None, position: Position) -> None:
        """An event read from the log: fold it now, or hold it back (paused, or gated)."""
        if position.topic in self.gated:
            at = self._received.setdefault(position.topic, {})
            if position.offset < at.get(position.partition, 0):
                return  # read again after a restart of the reader
            at[position.partition] = position.offset + 1
            self._buffered.setdefault((position.topic, position.partition), deque()).append((env, position))
        elif self._paused:
            self._held.append((env, position))
        else:
            self._fold(env, position)

    async def follow(self, consumer: AIOKafkaConsumer) -> None:
        def start(topic: str, partition: int) -> int:
            known = self._received if topic in self.gated else self.view.positions
            return known.get(topic, {}).get(partition, 0)

        tail = Tail(consumer, self.registry, self.topics, start)
        if self.caught_up.is_set():  # following again after a failure
            tail.stop_reading(self.until_caught_up)
        in_pass = False  # fetching on to the log's ends for a `fold_received` wait
        fresh_ends = False  # a fetch made during the pass brought records, and with them the ends
        while True:
            if self.on_demand and self.caught_up.is_set():
                self._wanted.clear()
                if (not self._to_ends and all(self._received_up_to(w) for w in self._wants)
                        and time.monotonic() - self._last_want >= self.linger_s):
                    # Nothing asked for is missing: fetch nothing (an idle follower's empty fetches
                    # cost the broker more than the follower) until a request names more.
                    tail.pause()
                    self._idle = True
                    await self._wanted.wait()
                    continue
                tail.resume()
                self._idle = False
                if self._to_ends and not in_pass:
                    tail.track_ends()
                    in_pass, fresh_ends = True, False
            records = await tail.fetch(PASS_FETCH_MS if in_pass else 200)
            for record in records:
                # An undecodable record was dead-lettered by the services that consume it in a
                # group; here it only moves the position.
                self.take(record.event if isinstance(record.event, Envelope) else None, record.position)
            if not self.caught_up.is_set():
                await tail.reached_ends()
                if tail.at_end:
                    self.caught_up.set()
                    tail.stop_reading(self.until_caught_up)
            elif in_pass:
                # The pass ends where a fetch finds nothing more, or where the ends reported by a
                # fetch made during it are reached (those from before it may be stale).
                fresh_ends |= bool(records)
                if fresh_ends:
                    await tail.reached_ends()
                if not records or (fresh_ends and tail.at_end):
                    in_pass = self._to_ends = False
                    self._passes += 1
                    async with self._changed:
                        self._changed.notify_all()
            if records:
                async with self._changed:
                    self._changed.notify_all()
