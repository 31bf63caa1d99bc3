"""The Kubernetes object model Berth schedules: msgspec Structs with Kubernetes' JSON field names."""

from .config import (
    DEFAULT_SCHEDULER_NAME,
    Extender,
    ExtenderManagedResource,
    KubeSchedulerConfiguration,
    PluginConfig,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
)
from .meta import LabelSelector, LabelSelectorRequirement, ObjectMeta, OwnerReference
from .namespace import Namespace
from .node import ContainerImage, Node, NodeCondition, NodeSpec, NodeStatus, Taint
from .pod import (
    Affinity,
    Container,
    ContainerPort,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodCondition,
    PodSchedulingGate,
    PodSpec,
    PodStatus,
    PreferredSchedulingTerm,
    ResourceRequirements,
    Toleration,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from .policy import PodDisruptionBudget, PodDisruptionBudgetSpec, PodDisruptionBudgetStatus, PriorityClass

__all__ = [
    "DEFAULT_SCHEDULER_NAME", "Affinity", "Container", "ContainerImage", "ContainerPort", "Extender",
    "ExtenderManagedResource", "KubeSchedulerConfiguration", "LabelSelector", "LabelSelectorRequirement",
    "Namespace", "Node", "NodeAffinity", "NodeCondition", "NodeSelector", "NodeSelectorRequirement", "NodeSelectorTerm",
    "NodeSpec", "NodeStatus", "ObjectMeta", "OwnerReference", "Pod", "PodAffinity", "PodAffinityTerm",
    "PodCondition", "PodDisruptionBudget", "PodDisruptionBudgetSpec", "PodDisruptionBudgetStatus",
    "PodSchedulingGate", "PodSpec", "PodStatus", "PluginConfig", "PluginRef", "PluginSet", "Plugins",
    "PreferredSchedulingTerm", "PriorityClass", "Profile", "ResourceRequirements", "Taint", "Toleration",
    "TopologySpreadConstraint", "WeightedPodAffinityTerm",
]
