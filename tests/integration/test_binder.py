"""The binder on the real broker: a burst of conflicting binds for one node binds only what fits,
every request gets one outcome, no pod is bound twice, and a deleted pod frees its room."""

from __future__ import annotations

import asyncio
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import pytest

from services.binder.app import KafkaShardLog, build, run
from services.binder.handlers import BinderHandler
from services.binder.settings import BinderSettings
from shared.adapters.kafka import KafkaPublisher
from shared.events import (
    BINDS,
    PLACEMENTS,
    BindRejected,
    BindRequested,
    Envelope,
    NodeUpserted,
    OutgoingEvent,
    PodBound,
    PodDeleted,
    envelope,
)
from shared.model import Node, Pod
from tests.builders import MakeNode, MakePod

from .fixtures import BerthTestEnv
from .helpers import eventually

pytestmark = pytest.mark.integration


def node(name: str = "n1", cpu: str = "4") -> Node:
    return MakeNode().name(name).capacity(cpu=cpu, memory="64Gi", pods=110).obj()


def pod(uid: str, cpu: str = "1") -> Pod:
    return MakePod().name(uid).uid(uid).req(cpu=cpu, memory="1Gi").obj()


def bind_request(p: Pod, node_name: str = "n1", attempt: str = "a1") -> Envelope:
    return envelope(BindRequested(pod_uid=p.metadata.uid or "", pod=p, node_name=node_name, attempt_id=attempt,
                                  seed=0), producer="test")


def out(env: BerthTestEnv, e: Envelope) -> OutgoingEvent:
    return OutgoingEvent(env.registry.topic_of(e.payload), e)


async def placements(env: BerthTestEnv) -> list[Envelope]:
    """Every outcome so far. Read to the fetches' high watermark (as the binder's rebuild does), not to
    ListOffsets, which Tansu answers too low after a multi-record batch."""
    read = await KafkaShardLog(env.settings, env.registry).read(
        PLACEMENTS, range(env.registry.spec(PLACEMENTS).partitions))
    return [e for k in sorted(read) for e in read[k][0]]


async def outcomes_of(env: BerthTestEnv, requests: Sequence[Envelope], timeout: float = 20.0) -> list[Envelope]:
    """The placements, once every request has an outcome (its causation id)."""
    wanted = {r.event_id for r in requests}
    seen: list[Envelope] = []

    async def done() -> bool:
        seen[:] = await placements(env)
        return wanted <= {e.causation_id for e in seen}

    await eventually(done, timeout=timeout, interval=0.2)
    return seen


def check_invariants(events: Sequence[Envelope], requests: Sequence[Envelope], capacity_pods: int) -> dict[str, int]:
    """One outcome per request (republished copies share the event id), one PodBound per pod,
    never more pods than fit; returns outcome counts by type."""
    by_request: dict[uuid.UUID | None, set[uuid.UUID]] = defaultdict(set)
    for e in events:
        by_request[e.causation_id].add(e.event_id)
    for r in requests:
        assert len(by_request[r.event_id]) == 1, f"request {r.payload} has {by_request[r.event_id]}"
    bound = {e.event_id: e.payload for e in events if isinstance(e.payload, PodBound)}
    uids = [p.pod_uid for p in bound.values()]
    assert len(uids) == len(set(uids)), "a pod bound twice"
    assert len(uids) <= capacity_pods, "over-committed"
    rejected = {e.event_id for e in events if isinstance(e.payload, BindRejected)}
    return {"bound": len(bound), "rejected": len(rejected)}


@asynccontextmanager
async def running_binder(env: BerthTestEnv) -> AsyncIterator[BinderHandler]:
    service, deletions = build(BinderSettings(base=env.settings.for_service("binder")), registry=env.registry,
                               serve_http=False)
    task = asyncio.ensure_future(run(service, deletions))
    try:
        yield service.handler  # type: ignore[misc]
    finally:
        service.request_stop()
        await asyncio.wait_for(task, 15)


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
