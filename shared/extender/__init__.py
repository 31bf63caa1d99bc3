"""Scheduler extenders (kube-scheduler's extender/v1 API): the wire types and the pure translation
between them and Berth's PodInfo / NodeInfo / Victims. The HTTP client is
shared.adapters.extender_http."""

from .translate import (
    ExtenderError,
    PodsOnNode,
    filter_args,
    filter_result,
    interested,
    preemption_args,
    preemption_result,
    prioritize_result,
)
from .types import (
    ExtenderArgs,
    ExtenderBindingArgs,
    ExtenderBindingResult,
    ExtenderFilterResult,
    ExtenderPreemptionArgs,
    ExtenderPreemptionResult,
    HostPriority,
    MetaPod,
    MetaVictims,
    NodeList,
    Victims,
)

__all__ = [
    "ExtenderArgs",
    "ExtenderBindingArgs",
    "ExtenderBindingResult",
    "ExtenderError",
    "ExtenderFilterResult",
    "ExtenderPreemptionArgs",
    "ExtenderPreemptionResult",
    "HostPriority",
    "MetaPod",
    "MetaVictims",
    "NodeList",
    "PodsOnNode",
    "Victims",
    "filter_args",
    "filter_result",
    "interested",
    "preemption_args",
    "preemption_result",
    "prioritize_result",
]
