"""Objects and steps the binder's tests share: nodes, pods, bind requests and one shard's state."""

from __future__ import annotations

from datetime import UTC, datetime

from shared.binding import BinderState, rebuild_shard
from shared.events import BindRejected, BindRequested, Envelope, NodeUpserted, PodBound, envelope
from shared.model import Node, Pod
from tests.builders import MakeNode, MakePod

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def node(name: str = "n1", cpu: str = "4", memory: str = "8Gi", pods: int = 110) -> Node:
    return MakeNode().name(name).capacity(cpu=cpu, memory=memory, pods=pods).obj()


def pod(uid: str, cpu: str = "1", memory: str = "1Gi", port: int = 0) -> Pod:
    b = MakePod().name(uid).uid(uid).req(cpu=cpu, memory=memory)
    return (b.host_port(port) if port else b).obj()


def upsert(n: Node) -> Envelope:
    return envelope(NodeUpserted(node=n), producer="test", timestamp=NOW)


def bind(p: Pod, node_name: str = "n1", attempt: str = "a1") -> Envelope:
    uid = p.metadata.uid or ""
    return envelope(BindRequested(pod_uid=uid, pod=p, node_name=node_name, attempt_id=attempt, seed=0),
                    producer="test", timestamp=NOW)


def state_with(*nodes: Node) -> BinderState:
    state = BinderState()
    state.install(0, rebuild_shard([upsert(n) for n in nodes], [], []))
    return state


def outcome(state: BinderState, request: Envelope, shard: int = 0) -> PodBound | BindRejected:
    env = state.decide(shard, request, NOW)
    assert isinstance(env.payload, PodBound | BindRejected)
    assert env.causation_id is not None
    return env.payload
