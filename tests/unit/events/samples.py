"""One realistic payload of every event type, for round-trip and projection tests."""

from __future__ import annotations

import base64
import zlib
from collections.abc import Iterable

from shared.binding.admission import admission_request
from shared.events import (
    EVENT_TYPES,
    AnyEvent,
    Assumed,
    BindRejected,
    BindRequested,
    DeadLettered,
    Envelope,
    ExtenderAnswer,
    ExtendersAnswered,
    FilterBatchRequested,
    LateBatchDecided,
    NamespaceDeleted,
    NamespaceUpserted,
    NodeDeleted,
    NodeFailure,
    NodeUpserted,
    PodBound,
    PodCounts,
    PodDeleted,
    PodDisruptionBudgetDeleted,
    PodDisruptionBudgetUpserted,
    PodEvicted,
    PodNominated,
    PodRef,
    PodShardResult,
    PodSubmitted,
    Position,
    PreemptionDecided,
    PreemptionRequested,
    PriorityClassDeleted,
    PriorityClassUpserted,
    ReceivedEvent,
    SchedulerStarted,
    SchedulingAttempted,
    ShardFiltered,
    TopicRegistry,
    envelope,
)
from shared.model import (
    LabelSelector,
    Namespace,
    Node,
    ObjectMeta,
    Pod,
    PodDisruptionBudget,
    PodDisruptionBudgetSpec,
    PriorityClass,
)
from shared.model.config import KubeSchedulerConfiguration
from tests.builders import MakeNode, MakePod


def make_pod(name: str = "web-0", uid: str | None = None, *, cpu: str = "500m", priority: int | None = 10,
             node_name: str = "", namespace: str = "default", scheduler_name: str = "") -> Pod:
    # schedulerName unset unless given, as the pod's spec has it before the loader's defaults
    b = (MakePod().name(name).namespace(namespace).uid(uid or f"uid-{name}").label("app", "web")
         .scheduler_name(scheduler_name)
         .container(image="nginx", requests={"cpu": cpu, "memory": "1Gi"}, name="c")
         .toleration("dedicated", "web", "NoSchedule"))
    if node_name:
        b.node(node_name)
    if priority is not None:
        b.priority(priority)
    return b.obj()


def make_node(name: str = "node-a", *, cpu: str = "4", zone: str = "a") -> Node:
    return (MakeNode().name(name).label("topology.kubernetes.io/zone", zone).taint("dedicated", "web", "NoSchedule")
            .capacity(cpu=cpu, memory="16Gi", pods=110).allocatable({"cpu": cpu, "memory": "15Gi", "pods": 110})
            .obj())


def sample_payloads() -> list[AnyEvent]:
    pod = make_pod()
    failure = NodeFailure(code="Unschedulable", reasons=["Insufficient cpu"], plugin="NodeResourcesFit",
                          nodes=["node-b"])
    samples: list[AnyEvent] = [
        NodeUpserted(node=make_node()),
        NodeDeleted(node_name="node-a"),
        PodSubmitted(pod=pod),
        PodDeleted(uid="uid-web-0", namespace="default", name="web-0"),
        PodNominated(uid="uid-web-0", node_name="node-a"),
        PodEvicted(uid="uid-low", preemptor_uid="uid-web-0", node_name="node-a"),
        FilterBatchRequested(
            batch_id="b-1", cycle=3, phase="filter", pods=[pod],
            prefilter=[PodCounts(pod_uid="uid-web-0", counts={"PodTopologySpread": {"zone": {"a": 2, "b": 0}}})],
        ),
        ShardFiltered(
            batch_id="b-1", cycle=3, shard=5, phase="filter", node_count=2,
            results=[PodShardResult(pod_uid="uid-web-0",
                                    feasible=["node-a"], scores={"NodeResourcesFit": [73]}, scored=True,
                                    failures=[failure])],
            counts=[PodCounts(pod_uid="uid-web-0", counts={"InterPodAffinity": {"zone": {"a": 1}}})],
        ),
        BindRequested(pod_uid="uid-web-0", pod=pod, node_name="node-a", attempt_id="uid-web-0/1", seed=42),
        PodBound(pod_uid="uid-web-0", node_name="node-a", attempt_id="uid-web-0/1"),
        BindRejected(pod_uid="uid-web-0", node_name="node-a", attempt_id="uid-web-0/2", reason="Insufficient cpu"),
        PreemptionRequested(pod=pod, node_statuses=[failure], attempt_id="uid-web-0/1"),
        PreemptionDecided(preemptor_uid="uid-web-0", nominated_node="node-a",
                          victims=[PodRef(uid="uid-low", namespace="default", name="low")]),
        SchedulingAttempted(pod_uid="uid-web-0", attempt=1, profile="default-scheduler", node_name=None,
                            message="0/2 nodes are available: 2 Insufficient cpu.", seed=42, config_hash="abc123"),
        SchedulerStarted(config=KubeSchedulerConfiguration(percentage_of_nodes_to_score=50), config_hash="abc123",
                         seed=7, batch_size=256),
        ExtendersAnswered(batch_id="b-1", pod_uid="uid-web-0", answers=[
            ExtenderAnswer(extender="http://127.0.0.1:8888", verb="filter", kept=["node-a"],
                           failed={"node-b": "full"}),
            ExtenderAnswer(extender="http://127.0.0.1:8889", verb="prioritize", scores={"node-a": 7}, weight=2)]),
        LateBatchDecided(batch_id="b-1", watermark={"nodes": [3, 0], "pods": [5]},
                         assumed=[Assumed(pod_uid="uid-web-1", node_name="node-b")]),
        DeadLettered(origin_topic="pods", partition=1, offset=7, key="k", reason="bad bytes",
                     raw=base64.b64encode(b"\x00\x01").decode()),
        PriorityClassUpserted(priority_class=PriorityClass(metadata=ObjectMeta(name="high"), value=1000)),
        PriorityClassDeleted(name="high"),
        NamespaceUpserted(namespace=Namespace(metadata=ObjectMeta(
            name="team-a", labels={"team": "a", "kubernetes.io/metadata.name": "team-a"}))),
        NamespaceDeleted(name="team-a"),
        PodDisruptionBudgetUpserted(pdb=PodDisruptionBudget(
            metadata=ObjectMeta(name="web", namespace="default"),
            spec=PodDisruptionBudgetSpec(min_available=1, selector=LabelSelector(match_labels={"app": "web"})))),
        PodDisruptionBudgetDeleted(namespace="default", name="web"),
    ]
    assert {type(s).__name__ for s in samples} == set(EVENT_TYPES), "a sample is missing for some event type"
    return samples


def lifecycle(n_nodes: int = 4, n_pods: int = 12, *, seed: int = 7) -> list[AnyEvent]:
    """A plausible history touching every read-model table: nodes come and go, pods are submitted,
    attempted, bound or rejected, one preemption evicts a victim, some pods are deleted."""
    import random

    rng = random.Random(seed)
    nodes = [f"node-{i}" for i in range(n_nodes)]
    out: list[AnyEvent] = [NodeUpserted(node=make_node(n, zone="ab"[i % 2])) for i, n in enumerate(nodes)]
    for i in range(n_pods):
        uid = f"uid-{i}"
        out.append(PodSubmitted(pod=make_pod(f"p-{i}", uid, priority=i % 3)))
        node = rng.choice(nodes)
        out.append(SchedulingAttempted(pod_uid=uid, attempt=1, profile="default-scheduler", node_name=node,
                                       message=None, seed=i, config_hash="h"))
        out.append(BindRequested(pod_uid=uid, pod=make_pod(f"p-{i}", uid), node_name=node, attempt_id=f"{uid}/1",
                                 seed=i))
        if i % 4 == 3:
            out.append(BindRejected(pod_uid=uid, node_name=node, attempt_id=f"{uid}/1", reason="Insufficient cpu"))
            out.append(SchedulingAttempted(pod_uid=uid, attempt=2, profile="default-scheduler", node_name=None,
                                           message=f"0/{n_nodes} nodes are available: {n_nodes} Insufficient cpu.",
                                           seed=i, config_hash="h"))
        else:
            out.append(PodBound(pod_uid=uid, node_name=node, attempt_id=f"{uid}/1"))
    out.append(PreemptionDecided(preemptor_uid="uid-3", nominated_node=nodes[0],
                                 victims=[PodRef(uid="uid-0", namespace="default", name="p-0")]))
    out.append(PodEvicted(uid="uid-0", preemptor_uid="uid-3", node_name=nodes[0]))
    out.append(PodNominated(uid="uid-3", node_name=nodes[0]))
    out.append(PodDeleted(uid="uid-1", namespace="default", name="p-1"))
    out.append(NodeDeleted(node_name=nodes[-1]))
    out.append(NodeUpserted(node=make_node(nodes[0], cpu="8")))
    return out


def received(payloads: Iterable[AnyEvent], registry: TopicRegistry | None = None,
             partitions: int = 3) -> list[ReceivedEvent]:
    """The payloads as a consumer would see them: on their topic, a partition by key, and per
    (topic, partition) offsets from 0."""
    registry = registry or TopicRegistry()
    next_offset: dict[tuple[str, int], int] = {}
    out = []
    for payload in payloads:
        topic = registry.topic_of(payload)
        partition = zlib.crc32(payload.partition_key().encode()) % partitions
        offset = next_offset.get((topic, partition), 0)
        next_offset[(topic, partition)] = offset + 1
        out.append(ReceivedEvent(envelope(payload, producer="test"), Position(topic, partition, offset)))
    return out


def running(pod: Pod) -> list[Envelope]:
    """A pod created on its node (`spec.nodeName`) and admitted there: its submission and the
    node's PodBound, the events after which it counts on the node."""
    created = envelope(PodSubmitted(pod=pod), producer="gateway")
    asked = admission_request(pod, 1, "queue")
    assert isinstance(asked.payload, BindRequested)
    bound = PodBound(pod_uid=pod.metadata.uid, node_name=pod.spec.node_name, attempt_id=asked.payload.attempt_id)
    return [created, envelope(bound, producer="binder", caused_by=asked)]
