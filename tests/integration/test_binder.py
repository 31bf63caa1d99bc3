"""The binder on the real broker: a burst of conflicting binds for one node binds only what fits,
every request gets one outcome, no pod is bound twice, a deleted pod frees its room, and a bind
handled before its node's event was fetched reads the node from the log."""

from __future__ import annotations

import asyncio
from collections import defaultdict

import pytest

from services.binder.app import KafkaShardLog, build, run
from services.binder.handlers import BinderHandler
from services.binder.settings import BinderSettings
from shared.adapters.kafka import KafkaPublisher
from shared.events import (
    BINDS,
    NODES,
    BindRejected,
    NodeUpserted,
    PodBound,
    PodDeleted,
    Position,
    ReceivedEvent,
    envelope,
)
from shared.events.partitioning import partition_for

from .binder_runs import bind_request, check_invariants, node, out, outcomes_of, pod, running_binder
from .fixtures import BerthTestEnv
from .helpers import eventually

pytestmark = pytest.mark.integration


async def test_burst_binds_only_what_fits(berth_env: BerthTestEnv, publisher: KafkaPublisher) -> None:
    env = berth_env
    await publisher.publish([out(env, envelope(NodeUpserted(node=node(cpu="4")), producer="test"))])
    requests = [bind_request(pod(f"p{i}")) for i in range(12)]
    again = bind_request(pod("p0"), attempt="a2")  # the same pod asked for again: never bound twice
    await publisher.publish([out(env, r) for r in [*requests, requests[3], again]])  # plus one redelivery

    async with running_binder(env) as handler:
        events = await outcomes_of(env, requests)
        counts = check_invariants(events, requests, capacity_pods=4)
        assert counts == {"bound": 4, "rejected": 8}
        assert all(e.payload.reason == "Insufficient cpu" for e in events if isinstance(e.payload, BindRejected))
        p0 = [e for e in events if e.causation_id == requests[0].event_id]
        assert isinstance(p0[0].payload, PodBound)  # p0 came first, so it fits

        # Deleting a bound pod frees its room: the next request fits again.
        await publisher.publish([out(env, envelope(PodDeleted(uid="p0", namespace="default", name="p0"),
                                                   producer="test"))])
        await eventually(lambda: _true("p0" in handler.state.deleted), timeout=10)
        late = bind_request(pod("p12"))
        await publisher.publish([out(env, late)])
        events = await outcomes_of(env, [late])
    outcome = next(e for e in events if e.causation_id == late.event_id)
    assert isinstance(outcome.payload, PodBound)
    assert len({e.event_id for e in events if e.causation_id == again.event_id}) == 0  # answered by p0's PodBound


async def _true(value: bool) -> bool:
    return value


async def test_shards_move_between_members_without_over_commit(berth_env: BerthTestEnv,
                                                               publisher: KafkaPublisher) -> None:
    """A second member joins mid-burst and the first leaves later: each rebuilds the shards it gains
    from the log, so no node takes more than fits and no request gets two outcomes."""
    env = berth_env
    names = ["node-0", "node-1", "node-4", "node-5"]  # partitions 3, 2, 0, 3: both halves of the range assignor
    await publisher.publish([out(env, envelope(NodeUpserted(node=node(n, cpu="3")), producer="test")) for n in names])
    rounds = [[bind_request(pod(f"r{r}-{n}-{i}"), n) for n in names for i in range(2)] for r in range(3)]

    async with running_binder(env) as first:
        await publisher.publish([out(env, r) for r in rounds[0]])
        await outcomes_of(env, rounds[0])
        service, deletions = build(BinderSettings(base=env.settings.for_service("binder-2")), registry=env.registry,
                                   serve_http=False)
        second = asyncio.ensure_future(run(service, deletions))
        try:
            await asyncio.wait_for(service.ready.wait(), 15)
            await publisher.publish([out(env, r) for r in rounds[1]])
            await outcomes_of(env, rounds[1])
        finally:
            service.request_stop()
            await asyncio.wait_for(second, 15)
        await publisher.publish([out(env, r) for r in rounds[2]])
        events = await outcomes_of(env, rounds[2])
        assert first.rebuilt > env.registry.spec(BINDS).partitions  # it took shards back after the second left
    assert {e.producer for e in events} == {"binder", "binder-2"}  # both members answered binds
    everything = [r for rnd in rounds for r in rnd]
    assert check_invariants(events, everything, capacity_pods=12) == {"bound": 12, "rejected": 12}
    per_node: dict[str, set[str]] = defaultdict(set)
    for e in events:
        if isinstance(e.payload, PodBound):
            per_node[e.payload.node_name].add(e.payload.pod_uid)
    assert {n: len(u) for n, u in per_node.items()} == dict.fromkeys(names, 3)


async def test_a_bind_before_its_node_event_reads_the_node(berth_env: BerthTestEnv,
                                                           publisher: KafkaPublisher) -> None:
    """`binds` and `nodes` are fetched in no order: a bind the queue decided on a view holding the
    node can be handled before the node's event is fetched. The binder reads the partition on."""
    env = berth_env
    shard = partition_for("n1", env.registry.spec(NODES).partitions)
    handler = BinderHandler(KafkaShardLog(env.settings.for_service("binder"), env.registry))
    await handler.positions([(BINDS, shard), (NODES, shard)])  # rebuilt: no node yet
    assert handler.node_positions[shard] == 0
    await publisher.publish([out(env, envelope(NodeUpserted(node=node(cpu="1")), producer="test"))])
    request = bind_request(pod("p1"))
    outcome = await handler.handle(ReceivedEvent(request, Position(BINDS, shard, 0)))
    assert isinstance(outcome[0].envelope.payload, PodBound)
    assert handler.node_positions[shard] == 1
    missing = bind_request(pod("p2"), node_name="gone")
    outcome = await handler.handle(ReceivedEvent(missing, Position(BINDS, shard, 1)))
    payload = outcome[0].envelope.payload
    assert isinstance(payload, BindRejected) and payload.reason == "node not found"
