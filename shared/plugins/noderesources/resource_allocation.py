"""Shared request/allocatable gathering for the resource scoring plugins (upstream
resourceAllocationScorer).

NodeResourcesFit scores cpu/memory on the non-zero requests (100m / 200Mi for a container that
names none) so that request-less pods still spread; BalancedAllocation uses the plain requests.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.resource import CPU, EPHEMERAL_STORAGE, MEMORY
from shared.framework.status import Code, Status

from .args import ResourceSpec
from .resource_names import is_scalar_resource_name

_CPU, _MEMORY, _EPHEMERAL, _SCALAR, _OTHER = range(5)


def _kind(name: str) -> int:
    if name == CPU:
        return _CPU
    if name == MEMORY:
        return _MEMORY
    if name == EPHEMERAL_STORAGE:
        return _EPHEMERAL
    return _SCALAR if is_scalar_resource_name(name) else _OTHER


class PodRequests:
    """The pod's request per configured resource, computed once per cycle (PreScore state)."""

    __slots__ = ("values",)

    def __init__(self, values: list[int]) -> None:
        self.values = values

    def clone(self) -> PodRequests:
        return self

    def is_best_effort(self) -> bool:
        return not any(self.values)


class ResourceAllocationScorer:
    __slots__ = ("resources", "use_requested", "scorer", "_kinds", "_names", "_cpu_memory")

    def __init__(self, resources: Sequence[ResourceSpec], use_requested: bool,
                 scorer: Callable[[Sequence[int], Sequence[int]], int]) -> None:
        self.resources = tuple(resources)
        self.use_requested = use_requested
        self.scorer = scorer
        self._names = tuple(r.name for r in self.resources)
        self._kinds = tuple(_kind(r.name) for r in self.resources)
        # The default resource list gets a path without per-resource dispatch.
        self._cpu_memory = self._kinds == (_CPU, _MEMORY)

    def pod_requests(self, pod: PodInfo) -> PodRequests:
        values: list[int] = []
        for name, kind in zip(self._names, self._kinds):
            if kind == _CPU:
                values.append(pod.requests.milli_cpu if self.use_requested else pod.non_zero_milli_cpu)
            elif kind == _MEMORY:
                values.append(pod.requests.memory if self.use_requested else pod.non_zero_memory)
            elif kind == _EPHEMERAL:
                values.append(pod.requests.ephemeral_storage)
            else:
                values.append(pod.requests.scalar.get(name, 0))
        return PodRequests(values)

    def score(self, node_info: NodeInfo, pod_requests: Sequence[int]) -> tuple[int, Status | None]:
        if not self.resources:
            return 0, Status(Code.ERROR, "resources not found")
        alloc_res = node_info.allocatable
        node_req = node_info.requested if self.use_requested else node_info.non_zero_requested
        if self._cpu_memory:
            # Scorers skip a resource whose allocatable is 0, so its requested value is never read.
            return self.scorer((node_req.milli_cpu + pod_requests[0], node_req.memory + pod_requests[1]),
                               (alloc_res.milli_cpu, alloc_res.memory)), None
        n = len(self._kinds)
        requested = [0] * n
        allocatable = [0] * n
        for i, kind in enumerate(self._kinds):
            pod_req = pod_requests[i]
            if kind == _CPU:
                alloc, req = alloc_res.milli_cpu, node_req.milli_cpu + pod_req
            elif kind == _MEMORY:
                alloc, req = alloc_res.memory, node_req.memory + pod_req
            elif kind == _EPHEMERAL:
                alloc, req = alloc_res.ephemeral_storage, node_info.requested.ephemeral_storage + pod_req
            elif kind == _SCALAR:
                # An extended resource the pod does not request is left out of the score.
                if pod_req == 0:
                    continue
                name = self._names[i]
                alloc = alloc_res.scalar.get(name, 0)
                req = node_info.requested.scalar.get(name, 0) + pod_req
            else:
                continue
            if alloc == 0:
                continue
            allocatable[i] = alloc
            requested[i] = req
        return self.scorer(requested, allocatable), None
