"""The scheduling services (binder, filter workers, preemption, queue) run in-process against the
real broker, fed Kubernetes objects as the gateway would publish them, and a scenario generator."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec

from services.binder.app import build as build_binder
from services.binder.app import run as run_binder
from services.binder.settings import BinderSettings
from services.filter.app import build as build_filter
from services.filter.app import run as run_filter
from services.filter.settings import FilterSettings
from services.preemption.app import build as build_preemption
from services.preemption.settings import PreemptionSettings
from services.queue.app import QueueApp
from services.queue.options import SchedulerOptions
from services.queue.settings import QueueSettings
from shared.adapters.kafka import KafkaPublisher
from shared.events import AnyEvent, NamespaceUpserted, NodeUpserted, OutgoingEvent, PodSubmitted, envelope
from shared.model.loader import ClusterInput

from .fixtures import BerthTestEnv


def scenario_docs(nodes: int, pods: int, seed: int) -> list[dict[str, Any]]:
    """Nodes in 3 zones, a tenth tainted; pods of three priorities asking for resources, tolerations,
    zone affinity, zone spread and host anti-affinity, enough of them to fill the cluster (so some
    preempt and some stay pending)."""
    rng = random.Random(seed)
    docs: list[dict[str, Any]] = []
    for i in range(nodes):
        node: dict[str, Any] = {
            "kind": "Node",
            "metadata": {"name": f"n{i:03}", "labels": {"zone": f"z{i % 3}", "kubernetes.io/hostname": f"n{i:03}"}},
            "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "20"}},
        }
        if i % 10 == 9:
            node["spec"] = {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}
        docs.append(node)
    for i in range(pods):
        kind = rng.randrange(6)
        labels = {"app": f"a{rng.randrange(4)}"}
        container: dict[str, Any] = {"name": "c", "resources": {"requests": {
            "cpu": rng.choice(["250m", "500m", "1"]), "memory": rng.choice(["256Mi", "1Gi"])}}}
        spec: dict[str, Any] = {"containers": [container], "priority": rng.choice([0, 0, 100, 1000])}
        if kind == 1:
            spec["tolerations"] = [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
        elif kind == 2:
            spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "zone", "operator": "In", "values": ["z0", "z1"]}]}]}}}
        elif kind == 3:
            spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "zone",
                                                  "whenUnsatisfiable": rng.choice(["DoNotSchedule", "ScheduleAnyway"]),
                                                  "labelSelector": {"matchLabels": labels}}]
        elif kind == 4:
            spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": labels}, "topologyKey": "kubernetes.io/hostname"}]}}
        if i < nodes * 2:
            # Already running, low priority: the later high-priority pods have something to preempt.
            spec.update(nodeName=f"n{i % nodes:03}", priority=0, tolerations=[
                {"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}])
            spec.pop("affinity", None)
            spec.pop("topologySpreadConstraints", None)
            container["resources"]["requests"]["cpu"] = "1500m"
        docs.append({"kind": "Pod", "metadata": {"name": f"p{i:04}", "namespace": "default", "labels": labels},
                     "spec": spec})
    return docs


def with_uids(cluster: ClusterInput) -> ClusterInput:
    """Pods as the gateway stores them: each with a uid."""
    pods = [msgspec.structs.replace(p, metadata=msgspec.structs.replace(
        p.metadata, uid=p.metadata.uid or f"uid-{p.metadata.namespace}-{p.metadata.name}")) for p in cluster.pods]
    return replace(cluster, pods=pods)


async def publish_cluster(publisher: KafkaPublisher, cluster: ClusterInput) -> None:
    """Nodes, then pods, with strictly increasing timestamps (the gateway's submission order)."""
    at = datetime.now(UTC)
    out: list[OutgoingEvent] = []
    payloads: list[AnyEvent] = [*(NamespaceUpserted(namespace=ns) for ns in cluster.namespaces),
                                 *(NodeUpserted(node=n) for n in cluster.nodes),
                                 *(PodSubmitted(pod=p) for p in cluster.pods)]
    for i, payload in enumerate(payloads):
        env = envelope(payload, producer="test", timestamp=at + timedelta(microseconds=i))
        out.append(OutgoingEvent("nodes" if isinstance(payload, NodeUpserted) else "pods", env))
    for i in range(0, len(out), 500):
        await publisher.publish(out[i:i + 500])


@dataclass
class RunningCluster:
    queue: QueueApp
    tasks: list[asyncio.Task[None]]


@asynccontextmanager
async def scheduling_services(env: BerthTestEnv, *, filter_workers: int = 1, lockstep: bool = False,
                              batch_size: int = 64, propose: bool = False,
                              propose_above_ms: float | None = None) -> AsyncIterator[RunningCluster]:
    base = env.settings
    stops: list[Any] = []
    tasks: list[asyncio.Task[None]] = []
    binder, deletions = build_binder(BinderSettings(base=base.for_service("binder")), registry=env.registry,
                                     serve_http=False)
    tasks.append(asyncio.ensure_future(run_binder(binder, deletions)))
    stops.append(binder.request_stop)
    for k in range(filter_workers):
        service, follower, _ = build_filter(FilterSettings(base=base.for_service(f"filter-{k}")),
                                            registry=env.registry, serve_http=False)
        tasks.append(asyncio.ensure_future(run_filter(service, follower)))
        stops.append(service.request_stop)
    preemption, p_follower = build_preemption(PreemptionSettings(base=base.for_service("preemption")),
                                              registry=env.registry, serve_http=False)
    p_follower.start()

    async def run_preemption() -> None:
        await p_follower.caught_up.wait()
        try:
            await preemption.run()
        finally:
            await p_follower.stop()

    tasks.append(asyncio.ensure_future(run_preemption()))
    stops.append(preemption.request_stop)
    options = SchedulerOptions(lockstep=lockstep, batch_size=batch_size, propose=propose,
                               propose_above_ms=propose_above_ms, unschedulable_timeout_s=5.0)
    queue = QueueApp(QueueSettings(base=base.for_service("queue"), options=options),
                     registry=env.registry, serve_http=False)
    tasks.append(asyncio.ensure_future(queue.run()))
    stops.append(queue.request_stop)
    try:
        yield RunningCluster(queue, tasks)
    finally:
        for stop in stops:
            stop()
        for task in tasks:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(task, 20)
