"""NodeResourcesFit: does the node have room for the pod's requests (Filter), and how full would it
be (Score, by the configured scoring strategy)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from shared.framework import events
from shared.framework.cycle_state import CycleState
from shared.framework.interfaces import (
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScorePlugin,
)
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.resource import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Resource
from shared.framework.status import Code, Status
from shared.plugins import names

from .args import parse_fit_args
from .resource_allocation import PodRequests, ResourceAllocationScorer
from .resource_names import is_extended_resource_name, is_scalar_resource_name
from .strategies import build_scorer

PRE_FILTER_STATE_KEY = "PreFilter" + names.NODE_RESOURCES_FIT
PRE_SCORE_STATE_KEY = "PreScore" + names.NODE_RESOURCES_FIT

TOO_MANY_PODS = "Too many pods"
INSUFFICIENT_CPU = "Insufficient cpu"
INSUFFICIENT_MEMORY = "Insufficient memory"
INSUFFICIENT_EPHEMERAL_STORAGE = "Insufficient ephemeral-storage"


class InsufficientResource:
    """A resource the node lacks for the pod. `unresolvable` means the pod asks for more than the
    node's whole allocatable, so evicting pods (preemption) cannot help."""

    __slots__ = ("resource_name", "reason", "requested", "used", "capacity", "unresolvable")

    def __init__(self, resource_name: str, reason: str, requested: int, used: int, capacity: int,
                 unresolvable: bool = False) -> None:
        self.resource_name = resource_name
        self.reason = reason
        self.requested = requested
        self.used = used
        self.capacity = capacity
        self.unresolvable = unresolvable

    def _key(self) -> tuple[str, str, int, int, int, bool]:
        return (self.resource_name, self.reason, self.requested, self.used, self.capacity, self.unresolvable)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, InsufficientResource):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return "InsufficientResource(%r, %r, requested=%d, used=%d, capacity=%d, unresolvable=%r)" % self._key()


class FitRequest:
    """The pod's request reduced to what Filter compares (PreFilter state): the scalar resources
    it really asks for, ignored extended resources already dropped."""

    __slots__ = ("milli_cpu", "memory", "ephemeral_storage", "scalars", "empty")

    def __init__(self, request: Resource, ignored_resources: Collection[str] = (),
                 ignored_groups: Collection[str] = ()) -> None:
        self.milli_cpu = request.milli_cpu
        self.memory = request.memory
        self.ephemeral_storage = request.ephemeral_storage
        scalars: list[tuple[str, int, str]] = []
        for name, quantity in request.scalar.items():
            if quantity == 0 or not is_scalar_resource_name(name):
                continue
            if is_extended_resource_name(name) and (
                name in ignored_resources or (ignored_groups and name.split("/", 1)[0] in ignored_groups)
            ):
                continue
            scalars.append((name, quantity, "Insufficient " + name))
        self.scalars = tuple(scalars)
        self.empty = not (self.milli_cpu or self.memory or self.ephemeral_storage or self.scalars)

    def clone(self) -> FitRequest:
        return self

    def insufficient(self, node_info: NodeInfo) -> list[InsufficientResource]:
        """Upstream fitsRequest: every shortfall, in the order pods, cpu, memory, storage, scalars."""
        out: list[InsufficientResource] = []
        alloc = node_info.allocatable
        used = node_info.requested
        pods = len(node_info.pods)
        if pods + 1 > alloc.allowed_pod_number:
            out.append(InsufficientResource(PODS, TOO_MANY_PODS, 1, pods, alloc.allowed_pod_number))
        if self.empty:
            return out
        if self.milli_cpu > 0 and self.milli_cpu > alloc.milli_cpu - used.milli_cpu:
            out.append(InsufficientResource(CPU, INSUFFICIENT_CPU, self.milli_cpu, used.milli_cpu, alloc.milli_cpu,
                                            self.milli_cpu > alloc.milli_cpu))
        if self.memory > 0 and self.memory > alloc.memory - used.memory:
            out.append(InsufficientResource(MEMORY, INSUFFICIENT_MEMORY, self.memory, used.memory, alloc.memory,
                                            self.memory > alloc.memory))
        if self.ephemeral_storage > 0 and self.ephemeral_storage > alloc.ephemeral_storage - used.ephemeral_storage:
            out.append(InsufficientResource(EPHEMERAL_STORAGE, INSUFFICIENT_EPHEMERAL_STORAGE, self.ephemeral_storage,
                                            used.ephemeral_storage, alloc.ephemeral_storage,
                                            self.ephemeral_storage > alloc.ephemeral_storage))
        for name, quantity, reason in self.scalars:
            capacity = alloc.scalar.get(name, 0)
            in_use = used.scalar.get(name, 0)
            if quantity > capacity - in_use:
                out.append(InsufficientResource(name, reason, quantity, in_use, capacity, quantity > capacity))
        return out

    def status(self, node_info: NodeInfo) -> Status | None:
        """Filter's verdict: None when the pod fits; all reasons kept otherwise."""
        alloc = node_info.allocatable
        used = node_info.requested
        # Fast path: the common case fits on every count and allocates nothing.
        if (len(node_info.pods) < alloc.allowed_pod_number
                and self.milli_cpu <= alloc.milli_cpu - used.milli_cpu
                and self.memory <= alloc.memory - used.memory
                and self.ephemeral_storage <= alloc.ephemeral_storage - used.ephemeral_storage):
            for name, quantity, _ in self.scalars:
                if quantity > alloc.scalar.get(name, 0) - used.scalar.get(name, 0):
                    break
            else:
                return None
        missing = self.insufficient(node_info)
        if not missing:
            return None
        code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if any(r.unresolvable for r in missing) else Code.UNSCHEDULABLE
        return Status(code, *(r.reason for r in missing))


def fits_request(pod_request: Resource, node_info: NodeInfo, ignored_resources: Collection[str] = (),
                 ignored_resource_groups: Collection[str] = ()) -> list[InsufficientResource]:
    """What the node lacks for a pod requesting `pod_request` (PodInfo.requests); empty when it fits."""
    return FitRequest(pod_request, ignored_resources, ignored_resource_groups).insufficient(node_info)


def fits(pod: PodInfo, node_info: NodeInfo) -> bool:
    """Whether the pod fits the node, nothing ignored (upstream Fits)."""
    return not fits_request(pod.requests, node_info)


class Fit(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions):
    NAME = names.NODE_RESOURCES_FIT
    NODE_LOCAL = True

    __slots__ = ("ignored_resources", "ignored_resource_groups", "strategy", "scorer", "handle")

    def __init__(self, ignored_resources: Collection[str] = (), ignored_resource_groups: Collection[str] = (),
                 scorer: ResourceAllocationScorer | None = None, strategy: str = "LeastAllocated",
                 handle: Handle | None = None) -> None:
        self.ignored_resources = frozenset(ignored_resources)
        self.ignored_resource_groups = frozenset(ignored_resource_groups)
        self.strategy = strategy
        if scorer is None:
            args = parse_fit_args(None)
            scorer = ResourceAllocationScorer(args.resources, False, build_scorer(args.strategy, args.resources, ()))
        self.scorer = scorer
        self.handle = handle

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> Fit:
        parsed = parse_fit_args(args)
        scorer = ResourceAllocationScorer(
            parsed.resources, False, build_scorer(parsed.strategy, parsed.resources, parsed.shape))
        return cls(parsed.ignored_resources, parsed.ignored_resource_groups, scorer, parsed.strategy, handle)

    # -- PreFilter / Filter ---------------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        state.write(PRE_FILTER_STATE_KEY,
                    FitRequest(pod.requests, self.ignored_resources, self.ignored_resource_groups))
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        request = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(request, FitRequest):
            return Status(Code.ERROR, f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        return request.status(node_info)

    def events_to_register(self) -> list[events.ClusterEvent]:
        # Berth has no queueing hints, so the node updates upstream adds without them are kept.
        act = events.ActionType
        return [
            events.ClusterEvent(events.POD, act.DELETE | act.UPDATE_POD_SCALE_DOWN),
            events.ClusterEvent(events.NODE, act.ADD | act.UPDATE_NODE_ALLOCATABLE
                                | act.UPDATE_NODE_TAINT | act.UPDATE_NODE_LABEL),
        ]

    # -- PreScore / Score -----------------------------------------------------------------
    def pre_score_reads_nodes(self, pod: PodInfo) -> bool:
        return False

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        state.write(PRE_SCORE_STATE_KEY, self.scorer.pod_requests(pod))
        return None

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> tuple[int, Status | None]:
        requests = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(requests, PodRequests):
            requests = self.scorer.pod_requests(pod)
        return self.scorer.score(node_info, requests.values)
