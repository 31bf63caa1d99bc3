"""The binder run on the real broker, as its tests drive it: bind requests, the placements read
back, the invariants every run must keep, and a binder running for the length of a test."""

from __future__ import annotations

import asyncio
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from services.binder.app import KafkaShardLog, build, run
from services.binder.handlers import BinderHandler
from services.binder.settings import BinderSettings
from shared.events import (
    PLACEMENTS,
    BindRejected,
    BindRequested,
    Envelope,
    OutgoingEvent,
    PodBound,
    envelope,
)
from shared.model import Node, Pod
from tests.builders import MakeNode, MakePod

from .fixtures import BerthTestEnv
from .helpers import eventually


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
        assert isinstance(service.handler, BinderHandler)
        yield service.handler
    finally:
        service.request_stop()
        await asyncio.wait_for(task, 15)
