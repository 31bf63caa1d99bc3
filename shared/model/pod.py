"""The scheduling-relevant subset of core/v1 Pod."""

from __future__ import annotations

import msgspec

from .base import K8s
from .meta import LabelSelector, ObjectMeta

Quantity = str | int | float


class ResourceRequirements(K8s, frozen=True, kw_only=True):
    requests: dict[str, Quantity] = {}
    limits: dict[str, Quantity] = {}


class ContainerPort(K8s, frozen=True, kw_only=True):
    container_port: int = 0
    host_port: int = 0
    protocol: str = "TCP"
    host_ip: str = msgspec.field(default="", name="hostIP")
    name: str = ""


class Container(K8s, frozen=True, kw_only=True):
    name: str = ""
    image: str = ""
    resources: ResourceRequirements = ResourceRequirements()
    ports: list[ContainerPort] = []
    restart_policy: str | None = None


class NodeSelectorRequirement(K8s, frozen=True, kw_only=True):
    key: str
    operator: str
    values: list[str] = []


class NodeSelectorTerm(K8s, frozen=True, kw_only=True):
    match_expressions: list[NodeSelectorRequirement] = []
    match_fields: list[NodeSelectorRequirement] = []


class NodeSelector(K8s, frozen=True, kw_only=True):
    node_selector_terms: list[NodeSelectorTerm] = []


class PreferredSchedulingTerm(K8s, frozen=True, kw_only=True):
    weight: int
    preference: NodeSelectorTerm


class NodeAffinity(K8s, frozen=True, kw_only=True):
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] = []


class PodAffinityTerm(K8s, frozen=True, kw_only=True):
    label_selector: LabelSelector | None = None
    namespaces: list[str] = []
    topology_key: str = ""
    namespace_selector: LabelSelector | None = None
    match_label_keys: list[str] = []
    mismatch_label_keys: list[str] = []


class WeightedPodAffinityTerm(K8s, frozen=True, kw_only=True):
    weight: int
    pod_affinity_term: PodAffinityTerm


class PodAffinity(K8s, frozen=True, kw_only=True):
    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] = []
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] = []


class Affinity(K8s, frozen=True, kw_only=True):
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None


class Toleration(K8s, frozen=True, kw_only=True):
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None


class TopologySpreadConstraint(K8s, frozen=True, kw_only=True):
    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: list[str] = []


class PodSchedulingGate(K8s, frozen=True, kw_only=True):
    name: str


class PodSpec(K8s, frozen=True, kw_only=True):
    node_name: str = ""
    scheduler_name: str = ""
    priority: int | None = None
    priority_class_name: str = ""
    preemption_policy: str | None = None
    containers: list[Container] = []
    init_containers: list[Container] = []
    overhead: dict[str, Quantity] = {}
    node_selector: dict[str, str] = {}
    affinity: Affinity | None = None
    tolerations: list[Toleration] = []
    topology_spread_constraints: list[TopologySpreadConstraint] = []
    scheduling_gates: list[PodSchedulingGate] = []
    host_network: bool = False
    restart_policy: str = ""
    resources: ResourceRequirements | None = None


class PodCondition(K8s, frozen=True, kw_only=True):
    type: str
    status: str
    reason: str = ""
    message: str = ""


class PodStatus(K8s, frozen=True, kw_only=True):
    phase: str = ""
    nominated_node_name: str = ""
    start_time: str | None = None
    conditions: list[PodCondition] = []


class Pod(K8s, frozen=True, kw_only=True):
    api_version: str = "v1"
    kind: str = "Pod"
    metadata: ObjectMeta = ObjectMeta()
    spec: PodSpec = PodSpec()
    status: PodStatus = PodStatus()

    @property
    def key(self) -> str:
        """namespace/name, how people and upstream's logs name a pod."""
        return f"{self.metadata.namespace}/{self.metadata.name}"
