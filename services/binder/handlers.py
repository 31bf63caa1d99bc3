"""The binder's handler: bind requests and node events of its shards in, PodBound / BindRejected out.

State per node shard lives in `shared.binding.BinderState`. How a shard's state is (re)built:

1. On every assignment the runtime asks `positions()` before it fetches anything. For each shard the
   member did not hold in the previous generation, the handler reads partition k of `nodes`, `binds`
   and `placements` from the beginning to their current ends (`ShardLog`) and folds them with
   `shared.binding.rebuild_shard`: the nodes, every pod the shard's binder committed (PodBound, its
   pod from the matching BindRequested) and the outcome of every request already answered.
   Shards the member lost are dropped; shards it kept stay as they are.
2. `positions()` returns, for `nodes` partition k, the offset the shard's state has folded up to, so
   the group consumer resumes right after it and no node event is folded twice or out of order.
   `binds` resume from the group's committed offset: requests handled before a crash but not
   committed come again; one whose outcome the rebuild read back is answered already (nothing is
   published again, also when a broker that lost its offsets hands every request over again), one
   whose outcome never reached the broker is decided now against the rebuilt state.
3. Deletions: `pods` is keyed by pod uid, not co-partitioned with the shards, so every member reads
   all of it with a reader of its own (`app.PodDeletions`, no group) and calls `pod_gone`. The first
   assignment waits until that reader has caught up with the end it saw at start.

4. A bind whose node the shard has not folded yet reads that shard's `nodes` partition to its end
   first (`_read_nodes_to_end`): the two topics are fetched in no order relative to each other.

`placements` is not consumed live: the binder is its only writer, and it folds each outcome into the
state as it decides it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Protocol

from services.runtime import Handler
from shared.binding import DEFAULT_ANTI_AFFINITY, BinderState, Ignored, rebuild_shard
from shared.events import (
    BINDS,
    NODES,
    PLACEMENTS,
    BindRequested,
    Envelope,
    NodeDeleted,
    NodeUpserted,
    OutgoingEvent,
    PodDeleted,
    PodEvicted,
    ReceivedEvent,
)
from shared.extender.binding import BindingExtender, extenders_binding
from shared.framework.pod_info import PodInfo
from shared.ports import TopicPartition

from .settings import DEFAULT_DELETIONS_CATCH_UP_S

log = logging.getLogger(__name__)

NODES_READ_TIMEOUT_S = 5.0
"""The most a bind waits for its shard's `nodes` partition to be read to its end."""


class ShardLog(Protocol):
    async def read(self, topic: str, partitions: Sequence[int],
                   start: int = 0) -> dict[int, tuple[list[Envelope], int]]:
        """Every decodable event of these partitions from offset `start` (the beginning by default),
        in order, and each partition's end offset at the time of reading."""
        ...


class BinderHandler(Handler):
    def __init__(self, shard_log: ShardLog, *, producer: str = "binder",
                 deletions_caught_up: Callable[[], Awaitable[object]] | None = None,
                 catch_up_timeout_s: float = DEFAULT_DELETIONS_CATCH_UP_S,
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC),
                 binders: Sequence[BindingExtender] = (), ignored: Mapping[str, Ignored] | None = None,
                 anti_affinity: frozenset[str] = DEFAULT_ANTI_AFFINITY) -> None:
        self.shard_log = shard_log
        self.binders = [b for b in binders if b.is_binder()]
        """Extenders with bindVerb: they bind a pod that fits instead of the binder alone."""
        self.state = BinderState(producer=producer, ignored=ignored or {}, anti_affinity=anti_affinity)
        self.node_positions: dict[int, int] = {}
        """nodes partition → the next offset its shard's state has not folded yet."""
        self.placement_positions: dict[int, int] = {}
        """placements partition → the offset up to which its outcomes are known to the shard's state
        (read by its rebuild, or found to be this member's own)."""
        self.deletions_caught_up = deletions_caught_up
        """Awaited before a rebuild: the deletions reader reached the end of `pods` it saw at start."""
        self._catch_up_timeout_s = catch_up_timeout_s
        self._clock = clock
        self.rebuilt = 0
        """Shards rebuilt from the log so far (tests, logs)."""
        self._deciding = asyncio.Lock()
        """Held while a decision runs on a thread (a binding extender's call), and by a rebalance:
        the state is the thread's alone meanwhile; deletions read then wait in `_gone`."""
        self._in_thread = False
        self._gone: list[str] = []
        self._settled = asyncio.Event()
        """Set while the state matches the assignment. The runtime's fetches may hand over a batch
        while the rebalance callback (and so the rebuild) is still running: such a batch waits."""

    # --- assignment: rebuild the shards gained ----------------------------------------------

    async def positions(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, int]:
        async with self._deciding:
            return await self._positions(partitions)

    async def _positions(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, int]:
        shards = sorted({p for topic, p in partitions if topic in (BINDS, NODES)})
        if self.deletions_caught_up is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.deletions_caught_up(), self._catch_up_timeout_s)
        for lost in set(self.state.shards) - set(shards):
            del self.state.shards[lost]
            self.node_positions.pop(lost, None)
            self.placement_positions.pop(lost, None)
        for k in await self._bound_by_others([k for k in shards if k in self.state.shards]):
            del self.state.shards[k]  # rebuilt below, with what the other member bound
        gained = [k for k in shards if k not in self.state.shards]
        if gained:
            await self._rebuild(gained)
        self._settled.set()
        return {(NODES, k): self.node_positions[k] for k in shards}

    async def _bound_by_others(self, kept: list[int]) -> list[int]:
        """Of the shards this member held before the rebalance and holds again, those another
        member answered requests of meanwhile: a member that dropped out of the group (its batch
        outlasted the poll interval, or its session timed out) and rejoined is told nothing of the
        generations it missed, in which another member may have held the shard and bound pods on
        its nodes; kept as it was, the state would not count them."""
        stale = []
        for k in kept:
            events, end = (await self.shard_log.read(PLACEMENTS, [k], self.placement_positions.get(k, 0)))[k]
            own = {outcome.event_id for outcome in self.state.shards[k].outcomes.values()}
            if all(e.event_id in own for e in events):
                self.placement_positions[k] = end
            else:
                stale.append(k)
        if stale:
            log.warning("binder: shards %s were answered by another member meanwhile; rebuilding them", stale)
        return stale

    async def _rebuild(self, shards: list[int]) -> None:
        # Binds are read before placements: a request answered between the two reads then has its
        # pod at hand; one that arrives after is simply handled live.
        nodes = await self.shard_log.read(NODES, shards)
        binds = await self.shard_log.read(BINDS, shards)
        placements = await self.shard_log.read(PLACEMENTS, shards)
        for k in shards:
            node_events, node_end = nodes[k]
            shard = rebuild_shard(node_events, binds[k][0], placements[k][0], self.state.deleted)
            self.state.install(k, shard)
            self.node_positions[k] = node_end
            self.placement_positions[k] = placements[k][1]
            self.rebuilt += 1
        log.info("binder: rebuilt shards %s from the log", shards)

    async def on_revoked(self, partitions: Sequence[TopicPartition]) -> None:
        # The state is kept until the next assignment says which shards stay: aiokafka revokes
        # everything on every rebalance, and a shard kept across it needs no rebuild unless
        # another member answered for it meanwhile (`_bound_by_others`).
        self._settled.clear()

    # --- live handling ----------------------------------------------------------------------

    async def handle(self, event: ReceivedEvent) -> Sequence[OutgoingEvent]:
        await self._settled.wait()
        env, pos = event.envelope, event.position
        payload = env.payload
        if pos.partition not in self.state.shards:
            # Fetched before a rebalance took the shard away: its new owner answers it.
            return []
        if pos.topic == NODES and isinstance(payload, NodeUpserted | NodeDeleted):
            if pos.offset < self.node_positions.get(pos.partition, 0):
                return []  # already folded by the rebuild
            self.state.shards[pos.partition].apply_node(payload)
            self.node_positions[pos.partition] = pos.offset + 1
            return []
        if pos.topic == BINDS and isinstance(payload, BindRequested):
            if self.state.answered_in_log(pos.partition, env.event_id):
                return []
            shard = self.state.shards[pos.partition]
            if payload.node_name not in shard.nodes and payload.node_name not in shard.deleted_nodes:
                await self._read_nodes_to_end(pos.partition)
                if pos.partition not in self.state.shards:
                    return []  # a rebalance took the shard away meanwhile: its new owner answers
            pod = PodInfo(payload.pod) if self.binders else None
            if pod is not None and any(b.is_interested(pod) for b in self.binders):
                # The extender's HTTP call blocks: the decision (fit check, call, record) runs on a
                # thread; requests are handled one at a time, and `_deciding` keeps everything
                # else off the state meanwhile.
                def refused(bind: BindRequested) -> str:
                    """A binding extender binds the pod (upstream extendersBinding): its error, or ""."""
                    bound, error = extenders_binding(self.binders, pod, bind.node_name)
                    return error if bound else ""
                async with self._deciding:
                    if pos.partition not in self.state.shards:
                        return []  # a rebalance took the shard away while this waited
                    self._in_thread = True
                    try:
                        outcome = await asyncio.to_thread(self.state.decide, pos.partition, env, self._clock(),
                                                          refused)
                    finally:
                        self._in_thread = False
                        gone, self._gone = self._gone, []
                        for uid in gone:
                            self.state.forget(uid)
            else:
                outcome = self.state.decide(pos.partition, env, self._clock())
            return [OutgoingEvent(PLACEMENTS, outcome)]
        log.warning("binder: ignoring %s on %s", env.type, pos.topic)
        return []

    async def _read_nodes_to_end(self, shard: int) -> None:
        """Fold the shard's node events up to its `nodes` partition's end now. `binds` and `nodes`
        are fetched with no order between them, so a bind can come before the NodeUpserted that the
        queue's decision saw (a node and its pods applied together). That event was in the log
        before the bind was, so a node still missing after this read is gone (or never was), and
        only then is the bind rejected as "node not found". The live consumer skips what this read
        folded, as it does after a rebuild. A node the shard saw deleted is not read for: the binds
        a batch aimed at it before it went are rejected at once, not one read each."""
        state, start = self.state.shards[shard], self.node_positions.get(shard, 0)
        try:
            found = await asyncio.wait_for(self.shard_log.read(NODES, [shard], start), NODES_READ_TIMEOUT_S)
        except TimeoutError:
            log.warning("binder: reading nodes partition %d to its end timed out; deciding on what is folded", shard)
            return
        if self.state.shards.get(shard) is not state:
            return  # the shard was taken away (and maybe rebuilt) meanwhile: what was read is stale
        events, end = found[shard]
        for e in events:
            if isinstance(e.payload, NodeUpserted | NodeDeleted):
                state.apply_node(e.payload)
        self.node_positions[shard] = max(start, end)

    def pod_gone(self, env: Envelope) -> None:
        """A PodDeleted or PodEvicted read from `pods`: the pod's room is free again."""
        if isinstance(env.payload, PodDeleted | PodEvicted):
            if self._in_thread:
                self._gone.append(env.payload.uid)  # forgotten once the decision's thread is done
            else:
                self.state.forget(env.payload.uid)

