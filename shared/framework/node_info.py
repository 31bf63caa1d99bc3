"""NodeInfo: a node with the aggregated state of the pods on it (upstream framework.NodeInfo)."""

from __future__ import annotations

from itertools import count

from shared.model import Node, Taint

from .host_ports import HostPortInfo
from .pod_info import PodInfo
from .resource import PODS, Resource

DEFAULT_MAX_PODS = 110

_generation = count(1)


def _next_generation() -> int:
    return next(_generation)


def generation_mark() -> int:
    """A generation above every NodeInfo's now and below any given later: a node whose
    generation is below the mark has not changed since it was taken."""
    return next(_generation)


_affinity_changes = [0]

_journal: list[NodeInfo] = []
"""Every real (not cloned) NodeInfo whose pods changed, in the order of the changes; with
`_journal_base`, positions in it are absolute, so a reader resumes where it stopped."""
_journal_base = [0]
JOURNAL_KEEP = 100_000


def journal_end() -> int:
    return _journal_base[0] + len(_journal)


def changed_since(position: int) -> list[NodeInfo] | None:
    """The NodeInfos changed after `position` (repeats included), None when that part of the
    journal has been dropped: the reader then starts over from the nodes themselves."""
    start = position - _journal_base[0]
    if start < 0:
        return None
    return _journal[start:]


def _log_change(info: NodeInfo) -> None:
    _journal.append(info)
    if len(_journal) > 2 * JOURNAL_KEEP:
        del _journal[:JOURNAL_KEEP]
        _journal_base[0] += JOURNAL_KEEP


def affinity_generation() -> int:
    """Bumped whenever a pod with (anti-)affinity joins or leaves any NodeInfo: the snapshot's
    lists of such nodes change only then, not with every placement."""
    return _affinity_changes[0]


class ImageStateSummary:
    """An image's size and how many nodes hold it (for ImageLocality's spread scaling)."""

    __slots__ = ("size", "num_nodes")

    def __init__(self, size: int, num_nodes: int) -> None:
        self.size = size
        self.num_nodes = num_nodes

    def __repr__(self) -> str:
        return f"ImageStateSummary(size={self.size}, num_nodes={self.num_nodes})"


def node_allocatable(node: Node) -> Resource:
    """Allocatable as the API defaults it: capacity when absent, 110 pods when not stated."""
    listed = node.status.allocatable or node.status.capacity
    allocatable = Resource.from_list(listed)
    if PODS not in listed:
        allocatable.allowed_pod_number = DEFAULT_MAX_PODS
    return allocatable


class NodeInfo:
    __slots__ = (
        "node", "name", "labels", "taints", "unschedulable", "pods", "pods_with_affinity",
        "pods_with_required_anti_affinity", "used_ports", "requested", "non_zero_requested",
        "allocatable", "image_states", "generation", "is_clone",
    )

    def __init__(self, node: Node, allocatable: Resource | None = None) -> None:
        self.node = node
        self.name = node.metadata.name
        self.labels = node.metadata.labels
        self.taints: list[Taint] = node.spec.taints
        self.unschedulable = node.spec.unschedulable
        self.pods: list[PodInfo] = []
        self.pods_with_affinity: list[PodInfo] = []
        self.pods_with_required_anti_affinity: list[PodInfo] = []
        self.used_ports = HostPortInfo()
        self.requested = Resource()
        self.non_zero_requested = Resource()
        self.allocatable = allocatable if allocatable is not None else node_allocatable(node)
        self.image_states: dict[str, ImageStateSummary] = {}
        self.generation = _next_generation()
        # A what-if copy (nominated pods, preemption dry runs): memos neither read nor keep its results.
        self.is_clone = False

    def add_pod(self, pi: PodInfo) -> None:
        self.pods.append(pi)
        if pi.has_affinity:
            self.pods_with_affinity.append(pi)
            _affinity_changes[0] += 1
        if pi.has_required_anti_affinity:
            self.pods_with_required_anti_affinity.append(pi)
            _affinity_changes[0] += 1
        self._update(pi, 1)

    def remove_pod(self, pi: PodInfo) -> bool:
        """Remove the pod with pi's uid; False when it is not on this node."""
        for i, existing in enumerate(self.pods):
            if existing.uid == pi.uid:
                del self.pods[i]
                break
        else:
            return False
        if existing.has_affinity or existing.has_required_anti_affinity:
            self.pods_with_affinity = [p for p in self.pods_with_affinity if p.uid != pi.uid]
            self.pods_with_required_anti_affinity = [p for p in self.pods_with_required_anti_affinity
                                                     if p.uid != pi.uid]
            _affinity_changes[0] += 1
        self._update(existing, -1)
        return True

    def _update(self, pi: PodInfo, sign: int) -> None:
        r = pi.requests
        req = self.requested
        req.milli_cpu += sign * r.milli_cpu
        req.memory += sign * r.memory
        req.ephemeral_storage += sign * r.ephemeral_storage
        for name, v in r.scalar.items():
            req.scalar[name] = req.scalar.get(name, 0) + sign * v
        self.non_zero_requested.milli_cpu += sign * pi.non_zero_milli_cpu
        self.non_zero_requested.memory += sign * pi.non_zero_memory
        for ip, protocol, port in pi.host_ports:
            if sign > 0:
                self.used_ports.add(ip, protocol, port)
            else:
                self.used_ports.remove(ip, protocol, port)
        self.generation = _next_generation()
        if not self.is_clone:
            _log_change(self)

    def clone(self) -> NodeInfo:
        copy = NodeInfo.__new__(NodeInfo)
        copy.node = self.node
        copy.name = self.name
        copy.labels = self.labels
        copy.taints = self.taints
        copy.unschedulable = self.unschedulable
        copy.pods = list(self.pods)
        copy.pods_with_affinity = list(self.pods_with_affinity)
        copy.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        copy.used_ports = self.used_ports.clone()
        copy.requested = self.requested.clone()
        copy.non_zero_requested = self.non_zero_requested.clone()
        copy.allocatable = self.allocatable
        copy.image_states = self.image_states
        copy.generation = self.generation
        copy.is_clone = True
        return copy

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={len(self.pods)}, requested={self.requested!r})"
