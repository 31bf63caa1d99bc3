"""scheduling.k8s.io/v1 PriorityClass and policy/v1 PodDisruptionBudget."""

from __future__ import annotations

from .base import K8s
from .meta import LabelSelector, ObjectMeta


class PriorityClass(K8s, frozen=True, kw_only=True):
    api_version: str = "scheduling.k8s.io/v1"
    kind: str = "PriorityClass"
    metadata: ObjectMeta = ObjectMeta()
    value: int = 0
    global_default: bool = False
    preemption_policy: str | None = None
    description: str = ""


class PodDisruptionBudgetSpec(K8s, frozen=True, kw_only=True):
    min_available: int | str | None = None
    max_unavailable: int | str | None = None
    selector: LabelSelector | None = None


class PodDisruptionBudgetStatus(K8s, frozen=True, kw_only=True):
    disruptions_allowed: int = 0
    current_healthy: int = 0
    desired_healthy: int = 0
    expected_pods: int = 0
    disrupted_pods: dict[str, str] = {}


class PodDisruptionBudget(K8s, frozen=True, kw_only=True):
    api_version: str = "policy/v1"
    kind: str = "PodDisruptionBudget"
    metadata: ObjectMeta = ObjectMeta()
    spec: PodDisruptionBudgetSpec = PodDisruptionBudgetSpec()
    status: PodDisruptionBudgetStatus | None = None
