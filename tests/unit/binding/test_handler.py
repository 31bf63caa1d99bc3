"""The binder's handler without a broker: a gained shard is rebuilt from its log before any bind is
answered, node events the rebuild folded are not folded again, lost shards are dropped, and a bind
fetched before its node's event reads the node from the log instead of being rejected."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from datetime import UTC, datetime

from services.binder.handlers import BinderHandler
from shared.binding import rebuild_shard
from shared.events import (
    BINDS,
    NODES,
    PLACEMENTS,
    BindRejected,
    Envelope,
    NodeDeleted,
    NodeUpserted,
    PodBound,
    PodDeleted,
    Position,
    ReceivedEvent,
    envelope,
)
from shared.framework.pod_info import PodInfo

from .support import bind, node, pod

NOW = datetime(2026, 1, 1, tzinfo=UTC)


class FakeLog:
    def __init__(self, logs: dict[tuple[str, int], list[Envelope]]) -> None:
        self.logs = logs
        self.reads: list[tuple[str, tuple[int, ...]]] = []
        self.starts: list[int] = []

    async def read(self, topic: str, partitions: Sequence[int],
                   start: int = 0) -> dict[int, tuple[list[Envelope], int]]:
        self.reads.append((topic, tuple(partitions)))
        self.starts.append(start)
        logs = {p: self.logs.get((topic, p), []) for p in partitions}
        return {p: (list(events[start:]), len(events)) for p, events in logs.items()}


def received(env: Envelope, topic: str, partition: int, offset: int) -> ReceivedEvent:
    return ReceivedEvent(env, Position(topic, partition, offset))


def assignment(*shards: int) -> list[tuple[str, int]]:
    return [(t, k) for t in (BINDS, NODES) for k in shards]


async def test_rebuild_then_redelivery_of_an_answered_request_publishes_nothing() -> None:
    # A previous owner bound p1 (cpu 1 of 2) and was killed before committing the request.
    upsert = envelope(NodeUpserted(node=node(cpu="2")), producer="test", timestamp=NOW)
    first = bind(pod("p1"))
    previous = BinderHandler(FakeLog({}), clock=lambda: NOW)
    previous.state.install(3, rebuild_shard([upsert], [], []))
    bound = previous.state.decide(3, first, NOW)
    shard_log = FakeLog({(NODES, 3): [upsert], (BINDS, 3): [first], (PLACEMENTS, 3): [bound]})

    handler = BinderHandler(shard_log, clock=lambda: NOW)
    assert await handler.positions(assignment(3)) == {(NODES, 3): 1}
    assert handler.rebuilt == 1
    # Its outcome is in the log already (the rebuild read it back): no second copy is published.
    assert await handler.handle(received(first, BINDS, 3, 0)) == []
    assert handler.state.shards[3].outcomes[first.event_id] == bound
    # The rebuild counted p1: p2 (cpu 2) no longer fits.
    out = await handler.handle(received(bind(pod("p2", cpu="2")), BINDS, 3, 1))
    assert isinstance(out[0].envelope.payload, BindRejected) and out[0].envelope.payload.reason == "Insufficient cpu"
    # The node event the rebuild folded comes again from the committed offset: ignored.
    await handler.handle(received(envelope(NodeDeleted(node_name="n1"), producer="t"), NODES, 3, 0))
    assert "n1" in handler.state.shards[3].nodes


async def test_kept_shards_are_not_rebuilt_and_lost_ones_dropped() -> None:
    shard_log = FakeLog({})
    handler = BinderHandler(shard_log, clock=lambda: NOW)
    await handler.positions(assignment(1, 2))
    await handler.on_revoked(assignment(1, 2))
    await handler.positions(assignment(2, 4))
    assert sorted(handler.state.shards) == [2, 4]
    assert [r for r in shard_log.reads if r[0] == NODES] == [(NODES, (1, 2)), (NODES, (4,))]
    # A bind fetched for shard 1 before the rebalance is left to its new owner.
    assert await handler.handle(received(bind(pod("p1")), BINDS, 1, 0)) == []


async def test_binds_wait_for_the_rebuild() -> None:
    # Handled before the rebuild it would be rejected ("node not found"); it waits and fits.
    handler = BinderHandler(FakeLog({(NODES, 0): [envelope(NodeUpserted(node=node()), producer="t")]}),
                            clock=lambda: NOW)
    pending = asyncio.ensure_future(handler.handle(received(bind(pod("p1")), BINDS, 0, 0)))
    await asyncio.sleep(0)
    assert not pending.done()
    await handler.positions(assignment(0))
    out = await asyncio.wait_for(pending, 1)
    assert isinstance(out[0].envelope.payload, PodBound)


async def test_deletion_frees_room() -> None:
    handler = BinderHandler(FakeLog({(NODES, 0): [envelope(NodeUpserted(node=node(cpu="1")), producer="t")]}),
                            clock=lambda: NOW)
    await handler.positions(assignment(0))
    first = await handler.handle(received(bind(pod("p1")), BINDS, 0, 0))
    assert isinstance(first[0].envelope.payload, PodBound)
    handler.pod_gone(envelope(PodDeleted(uid="p1", namespace="default", name="p1"), producer="t"))
    second = await handler.handle(received(bind(pod("p2")), BINDS, 0, 1))
    assert isinstance(second[0].envelope.payload, PodBound)


async def test_a_bind_fetched_before_its_node_reads_the_node_from_the_log() -> None:
    # n1 was upserted at offset 1 of nodes partition 0 (cpu 1), after the rebuild, then grown at
    # offset 2 (cpu 2); a bind that a queue decided on a view holding n1 is fetched before both.
    other = envelope(NodeUpserted(node=node("n0")), producer="t")
    log = FakeLog({(NODES, 0): [other]})
    handler = BinderHandler(log, clock=lambda: NOW)
    await handler.positions(assignment(0))
    small = envelope(NodeUpserted(node=node(cpu="1")), producer="t")
    grown = envelope(NodeUpserted(node=node(cpu="2")), producer="t")
    log.logs[(NODES, 0)] += [small, grown]
    out = await handler.handle(received(bind(pod("p1")), BINDS, 0, 0))
    assert isinstance(out[0].envelope.payload, PodBound)
    assert log.reads[-1] == (NODES, (0,)) and log.starts[-1] == 1  # from where the state stopped
    assert handler.node_positions[0] == 3
    # The older node event comes live afterwards: folded already, it is skipped, so n1 keeps
    # cpu 2 and p2 fits beside p1.
    await handler.handle(received(small, NODES, 0, 1))
    out = await handler.handle(received(bind(pod("p2")), BINDS, 0, 1))
    assert isinstance(out[0].envelope.payload, PodBound)


async def test_a_bind_for_a_node_the_log_does_not_hold_is_rejected_after_reading_it() -> None:
    log = FakeLog({(NODES, 0): [envelope(NodeUpserted(node=node("n0")), producer="t")]})
    handler = BinderHandler(log, clock=lambda: NOW)
    await handler.positions(assignment(0))
    out = await handler.handle(received(bind(pod("p1")), BINDS, 0, 0))
    payload = out[0].envelope.payload
    assert isinstance(payload, BindRejected) and payload.reason == "node not found"
    assert log.starts[-1] == 1 and handler.node_positions[0] == 1
    # A node the shard holds needs no read.
    reads = len(log.reads)
    await handler.handle(received(bind(pod("p2"), "n0"), BINDS, 0, 1))
    assert len(log.reads) == reads


async def test_a_bind_for_a_node_seen_deleted_reads_nothing() -> None:
    log = FakeLog({(NODES, 0): [envelope(NodeUpserted(node=node()), producer="t"),
                                envelope(NodeDeleted(node_name="n1"), producer="t")]})
    handler = BinderHandler(log, clock=lambda: NOW)
    await handler.positions(assignment(0))
    reads = len(log.reads)
    out = await handler.handle(received(bind(pod("p1")), BINDS, 0, 0))
    payload = out[0].envelope.payload
    assert isinstance(payload, BindRejected) and payload.reason == "node not found"
    assert len(log.reads) == reads


async def test_a_shard_taken_away_during_the_read_is_left_to_its_new_owner() -> None:
    handler: BinderHandler

    class Rebalancing(FakeLog):
        async def read(self, topic: str, partitions: Sequence[int],
                       start: int = 0) -> dict[int, tuple[list[Envelope], int]]:
            found = await super().read(topic, partitions, start)
            if start:  # the read for the bind, not the rebuild: the shard moves meanwhile
                await handler.on_revoked(assignment(0))
                await handler.positions(assignment(1))
            return found

    log = Rebalancing({(NODES, 0): [envelope(NodeUpserted(node=node("n0")), producer="t")]})
    handler = BinderHandler(log, clock=lambda: NOW)
    await handler.positions(assignment(0))
    log.logs[(NODES, 0)].append(envelope(NodeUpserted(node=node()), producer="t"))
    assert await handler.handle(received(bind(pod("p1")), BINDS, 0, 0)) == []
    assert 0 not in handler.state.shards


async def test_a_kept_shard_another_member_answered_meanwhile_is_rebuilt() -> None:
    # Member A holds shard 2 (n1, 2 cpu) and binds p1. It drops out of the group; in a generation
    # it takes no part in, member B holds the shard and binds p2. A rejoins and gets shard 2 back:
    # told nothing of B's generation, it must not keep its state, which does not count p2.
    logs: dict[tuple[str, int], list[Envelope]] = {(NODES, 2): [envelope(NodeUpserted(node=node(cpu="2")),
                                                                         producer="t", timestamp=NOW)]}
    shard_log = FakeLog(logs)

    async def answer(member: BinderHandler, request: Envelope) -> Envelope:
        offset = len(logs.setdefault((BINDS, 2), []))
        logs[(BINDS, 2)].append(request)
        [out] = await member.handle(received(request, BINDS, 2, offset))
        logs.setdefault((PLACEMENTS, 2), []).append(out.envelope)
        return out.envelope

    a = BinderHandler(shard_log, clock=lambda: NOW)
    await a.positions(assignment(2))
    assert isinstance((await answer(a, bind(pod("p1")))).payload, PodBound)
    await a.on_revoked(assignment(2))
    await a.positions(assignment(2))  # a rebalance A took part in: nothing else was written
    assert a.rebuilt == 1
    await a.on_revoked(assignment(2))

    b = BinderHandler(shard_log, clock=lambda: NOW)
    await b.positions(assignment(2))
    assert isinstance((await answer(b, bind(pod("p2")))).payload, PodBound)

    await a.positions(assignment(2))
    assert a.rebuilt == 2
    rejected = (await answer(a, bind(pod("p3")))).payload
    assert isinstance(rejected, BindRejected) and rejected.reason == "Insufficient cpu"


class _SlowBinder:
    """A binding extender whose bind call blocks until the test lets it go."""

    def __init__(self) -> None:
        self.entered, self.release = threading.Event(), threading.Event()

    def is_binder(self) -> bool:
        return True

    def is_interested(self, pod: PodInfo) -> bool:
        return True

    def is_ignorable(self) -> bool:
        return False

    def bind(self, pod: PodInfo, node_name: str) -> None:
        self.entered.set()
        assert self.release.wait(5)


async def test_nothing_touches_the_state_while_a_binding_extender_is_called() -> None:
    binder = _SlowBinder()
    handler = BinderHandler(FakeLog({(NODES, 0): [envelope(NodeUpserted(node=node(cpu="2")), producer="t")]}),
                            clock=lambda: NOW, binders=[binder])
    await handler.positions(assignment(0))
    binder.release.set()
    assert isinstance((await handler.handle(received(bind(pod("p0")), BINDS, 0, 0)))[0].envelope.payload, PodBound)
    binder.release.clear()

    deciding = asyncio.ensure_future(handler.handle(received(bind(pod("p1")), BINDS, 0, 1)))
    assert await asyncio.to_thread(binder.entered.wait, 5)
    # Read while the extender is called: p0's deletion waits, and so does a rebalance.
    handler.pod_gone(envelope(PodDeleted(uid="p0", namespace="default", name="p0"), producer="t"))
    rebalance = asyncio.ensure_future(handler.positions(assignment(0)))
    await asyncio.sleep(0.05)
    assert "p0" in handler.state.shards[0].pods and not rebalance.done()
    binder.release.set()
    assert isinstance((await deciding)[0].envelope.payload, PodBound)
    await rebalance
    assert "p0" not in handler.state.shards[0].pods and "p1" in handler.state.shards[0].pods
    # p0's room is free again: a 1-cpu pod fits beside p1 on the 2-cpu node.
    assert isinstance((await handler.handle(received(bind(pod("p2")), BINDS, 0, 2)))[0].envelope.payload, PodBound)
