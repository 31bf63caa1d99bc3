"""Workloads modelled on kube-scheduler's scheduler_perf (test/integration/scheduler_perf):
node-default (4 cpu, 32Gi, 110 pods) and pod-default (100m cpu, 500Mi) templates, initial pods
already running, then the measured pods. Generated from a seed, so every run sees the same cluster."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from shared.model import (
    Affinity,
    Container,
    LabelSelector,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    NodeStatus,
    ObjectMeta,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodSpec,
    ResourceRequirements,
    TopologySpreadConstraint,
)
from shared.model.loader import ClusterInput

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
ZONES = 10


CHURN_INTERVAL_S = 0.2
"""scheduler_perf's churn op in PreemptionAsync: one pod every 200 ms."""


@dataclass(frozen=True)
class Workload:
    name: str
    cluster: ClusterInput
    measured: int  # how many of cluster.pods (the last ones) are the measured pods
    churn: tuple[Pod, ...] = ()
    """Pods submitted one every `churn_interval_s` while the measured pods are scheduled (not
    measured themselves); the bench stops submitting them once the measured pods are bound."""
    churn_interval_s: float = CHURN_INTERVAL_S


def _node(i: int, rng: random.Random) -> Node:
    name = f"node-{i}"
    return Node(
        metadata=ObjectMeta(name=name, uid=name, labels={ZONE: f"zone-{i % ZONES}", HOSTNAME: name,
                                                         "tier": f"tier-{i % 3}"}),
        status=NodeStatus(allocatable={"cpu": "4", "memory": "32Gi", "pods": "110"},
                          capacity={"cpu": "4", "memory": "32Gi", "pods": "110"}),
    )


def _pod(name: str, *, labels: dict[str, str] | None = None, node: str = "", priority: int = 0,
          affinity: Affinity | None = None, spread: list[TopologySpreadConstraint] | None = None,
          cpu: str = "100m", memory: str = "500Mi") -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, namespace="default", uid=f"default/{name}", labels=labels or {}),
        spec=PodSpec(
            node_name=node, scheduler_name="default-scheduler", priority=priority,
            preemption_policy="PreemptLowerPriority", affinity=affinity,
            topology_spread_constraints=spread or [],
            containers=[Container(name="c", image="registry.k8s.io/pause:3.9",
                                  resources=ResourceRequirements(requests={"cpu": cpu, "memory": memory}))],
        ),
    )


def _initial(nodes: list[Node], count: int, prefix: str = "init", *, labels: dict[str, str] | None = None) -> list[Pod]:
    return [_pod(f"{prefix}-{i}", node=nodes[i % len(nodes)].name, labels=labels) for i in range(count)]


def scheduling_basic(nodes: int, pods: int, rng: random.Random) -> Workload:
    ns = [_node(i, rng) for i in range(nodes)]
    init = _initial(ns, min(1000, nodes))
    measured = [_pod(f"pod-{i}") for i in range(pods)]
    return Workload("SchedulingBasic", ClusterInput(nodes=ns, pods=init + measured), len(measured))


def topology_spreading(nodes: int, pods: int, rng: random.Random) -> Workload:
    ns = [_node(i, rng) for i in range(nodes)]
    init = _initial(ns, min(1000, nodes), labels={"app": "spread"})
    sel = LabelSelector(match_labels={"app": "spread"})
    constraint = [TopologySpreadConstraint(max_skew=5, topology_key=ZONE, when_unsatisfiable="DoNotSchedule",
                                           label_selector=sel)]
    measured = [_pod(f"pod-{i}", labels={"app": "spread"}, spread=constraint) for i in range(pods)]
    return Workload("TopologySpreading", ClusterInput(nodes=ns, pods=init + measured), len(measured))


def node_affinity(nodes: int, pods: int, rng: random.Random) -> Workload:
    ns = [_node(i, rng) for i in range(nodes)]
    init = _initial(ns, min(1000, nodes))
    zones = [f"zone-{z}" for z in range(ZONES // 2)]
    term = NodeSelectorTerm(match_expressions=[NodeSelectorRequirement(key=ZONE, operator="In", values=zones)])
    aff = Affinity(node_affinity=NodeAffinity(
        required_during_scheduling_ignored_during_execution=NodeSelector(node_selector_terms=[term])))
    measured = [_pod(f"pod-{i}", affinity=aff) for i in range(pods)]
    return Workload("NodeAffinity", ClusterInput(nodes=ns, pods=init + measured), len(measured))


def pod_anti_affinity(nodes: int, pods: int, rng: random.Random) -> Workload:
    ns = [_node(i, rng) for i in range(nodes)]
    init = _initial(ns, min(1000, nodes) // 2, labels={"color": "green"})
    aff = Affinity(pod_anti_affinity=PodAffinity(required_during_scheduling_ignored_during_execution=[
        PodAffinityTerm(label_selector=LabelSelector(match_labels={"color": "green"}), topology_key=HOSTNAME)]))
    measured = [_pod(f"pod-{i}", labels={"color": "green"}, affinity=aff) for i in range(min(pods, nodes))]
    return Workload("PodAntiAffinity", ClusterInput(nodes=ns, pods=init + measured), len(measured))


def preemption(nodes: int, pods: int, rng: random.Random) -> Workload:
    ns = [_node(i, rng) for i in range(nodes)]
    # Fill every node with low-priority pods (4 x 900m), then ask for high-priority ones.
    init = [_pod(f"low-{i}", node=ns[i // 4].name, cpu="900m", memory="1Gi") for i in range(nodes * 4)]
    measured = [_pod(f"pod-{i}", priority=10, cpu="900m", memory="1Gi") for i in range(pods)]
    return Workload("Preemption", ClusterInput(nodes=ns, pods=init + measured), len(measured))


def preemption_async(nodes: int, pods: int, rng: random.Random) -> Workload:
    """upstream's PreemptionAsync: nodes 3.6 of their 4 CPUs full of low-priority pods, plain pods
    measured while high-priority ones needing 3 CPUs (three evictions each) arrive every 200 ms.
    Upstream's churn has no end; here one preemptor per 20 measured pods (at least 10), more than a
    run lasts at either mode's rates."""
    ns = [_node(i, rng) for i in range(nodes)]
    init = [_pod(f"low-{i}", node=ns[i // 4].name, cpu="900m", memory="1Gi") for i in range(nodes * 4)]
    measured = [_pod(f"pod-{i}") for i in range(pods)]
    churn = tuple(_pod(f"preemptor-{i}", priority=10, cpu="3", memory="1Gi") for i in range(max(10, pods // 20)))
    return Workload("PreemptionAsync", ClusterInput(nodes=ns, pods=init + measured), len(measured), churn)


def mixed(nodes: int, pods: int, rng: random.Random) -> Workload:
    ns = [_node(i, rng) for i in range(nodes)]
    init = _initial(ns, min(1000, nodes))
    makers: list[Callable[[int], Pod]] = [
        lambda i: _pod(f"pod-{i}"),
        lambda i: _pod(f"pod-{i}", labels={"app": "web"}, spread=[TopologySpreadConstraint(
            max_skew=3, topology_key=ZONE, when_unsatisfiable="ScheduleAnyway",
            label_selector=LabelSelector(match_labels={"app": "web"}))]),
        lambda i: _pod(f"pod-{i}", cpu="500m", memory="2Gi", priority=rng.choice([0, 100])),
    ]
    measured = [makers[rng.randrange(len(makers))](i) for i in range(pods)]
    return Workload("Mixed", ClusterInput(nodes=ns, pods=init + measured), len(measured))


WORKLOADS: dict[str, Callable[[int, int, random.Random], Workload]] = {
    "SchedulingBasic": scheduling_basic,
    "TopologySpreading": topology_spreading,
    "NodeAffinity": node_affinity,
    "PodAntiAffinity": pod_anti_affinity,
    "Preemption": preemption,
    "PreemptionAsync": preemption_async,
    "Mixed": mixed,
}


def generate(name: str, nodes: int, pods: int, seed: int = 0) -> Workload:
    try:
        maker = WORKLOADS[name]
    except KeyError:
        raise ValueError(f"unknown workload {name!r}; known: {', '.join(WORKLOADS)}") from None
    return maker(nodes, pods, random.Random(seed))
