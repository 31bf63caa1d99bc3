"""PodInfo: a pod with everything the plugins need precomputed once (upstream framework.PodInfo
plus the cached request vectors of computePodResourceRequest)."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from shared.model import Container, Pod, PodAffinityTerm
from shared.model.meta import LabelSelector, LabelSelectorRequirement
from shared.model.namespace import name_labels
from shared.model.pod_resources import container_requests, is_pod_level_resource
from shared.model.selectors import EVERYTHING, NOTHING, Selector, compile_label_selector

from .resource import CPU, DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST, MEMORY, Resource


class AffinityTerm:
    """A pod (anti-)affinity term with namespaces and selectors resolved (upstream AffinityTerm)."""

    __slots__ = ("namespaces", "selector", "topology_key", "namespace_selector")

    def __init__(self, namespaces: frozenset[str], selector: Selector, topology_key: str,
                 namespace_selector: Selector) -> None:
        self.namespaces = namespaces
        self.selector = selector
        self.topology_key = topology_key
        self.namespace_selector = namespace_selector

    def matches(self, pod: PodInfo, ns_labels: Mapping[str, str] | None = None) -> bool:
        """Whether `pod` is selected by this term (its namespace, then its labels)."""
        if pod.namespace in self.namespaces or (
            not self.namespace_selector.nothing
            and self.namespace_selector.matches(ns_labels if ns_labels is not None else name_labels(pod.namespace))
        ):
            return self.selector.matches(pod.labels)
        return False


class WeightedAffinityTerm:
    __slots__ = ("term", "weight")

    def __init__(self, term: AffinityTerm, weight: int) -> None:
        self.term = term
        self.weight = weight


def _merge_label_keys(term: PodAffinityTerm, pod_labels: Mapping[str, str]) -> LabelSelector | None:
    """matchLabelKeys / mismatchLabelKeys become In / NotIn requirements on the pod's own values."""
    selector = term.label_selector
    if selector is None or not (term.match_label_keys or term.mismatch_label_keys):
        return selector
    extra = [
        LabelSelectorRequirement(key=k, operator="In", values=[pod_labels[k]])
        for k in term.match_label_keys if k in pod_labels
    ] + [
        LabelSelectorRequirement(key=k, operator="NotIn", values=[pod_labels[k]])
        for k in term.mismatch_label_keys if k in pod_labels
    ]
    return LabelSelector(
        match_labels=selector.match_labels, match_expressions=[*selector.match_expressions, *extra]
    )


def affinity_term(pod: Pod, term: PodAffinityTerm) -> AffinityTerm:
    namespaces = frozenset(term.namespaces)
    if not namespaces and term.namespace_selector is None:
        namespaces = frozenset((pod.metadata.namespace,))
    ns_selector = compile_label_selector(term.namespace_selector) if term.namespace_selector is not None else NOTHING
    selector = compile_label_selector(_merge_label_keys(term, pod.metadata.labels))
    return AffinityTerm(namespaces, selector, term.topology_key, ns_selector)


def _is_restartable(c: Container) -> bool:
    return c.restart_policy == "Always"


def pod_level_requests(pod: Pod) -> dict[str, str | int | float]:
    """The pod's own requests (PodLevelResources, on by default since v1.34), those it may set."""
    resources = pod.spec.resources
    if resources is None:
        return {}
    return {name: q for name, q in resources.requests.items() if is_pod_level_resource(name)}


def compute_pod_requests(pod: Pod, non_missing: Mapping[str, int] | None = None) -> Resource:
    """Upstream's computePodResourceRequest / resourcehelper.PodRequests.

    Containers are summed; each init container must fit on its own (plus the restartable
    sidecars started before it), so the result is the max of the two. Requests the pod sets as a
    whole (`spec.resources.requests`: cpu, memory, hugepages) replace the containers' figure for
    those resources; the others still come from the containers. Overhead is added last.
    `non_missing` supplies a value for a resource a container names no request for (scoring's
    100m cpu / 200Mi memory); with pod-level requests, only for a resource that neither the pod
    nor any container requests.
    """
    pod_level = pod_level_requests(pod)
    if pod_level and non_missing:
        named = set(pod_level).union(*(container_requests(c) for c in (*pod.spec.containers,
                                                                        *pod.spec.init_containers)))
        non_missing = {name: v for name, v in non_missing.items() if name not in named}

    def reqs_of(c: Container) -> Resource:
        r = Resource.from_list(container_requests(c))
        if non_missing:
            named = container_requests(c)
            if CPU in non_missing and CPU not in named:
                r.milli_cpu += non_missing[CPU]
            if MEMORY in non_missing and MEMORY not in named:
                r.memory += non_missing[MEMORY]
        return r

    total = Resource()
    for c in pod.spec.containers:
        total.add(reqs_of(c))
    init_max = Resource()
    sidecars = Resource()
    for c in pod.spec.init_containers:
        r = reqs_of(c)
        if _is_restartable(c):
            total.add(r)
            sidecars.add(r)
            r = sidecars.clone()
        else:
            r.add(sidecars)
        init_max.set_max(r)
    total.set_max(init_max)
    for name, q in pod_level.items():
        total.set(name, q)
    if pod.spec.overhead:
        total.add(Resource.from_list(pod.spec.overhead))
    return total


_NON_MISSING = {CPU: DEFAULT_MILLI_CPU_REQUEST, MEMORY: DEFAULT_MEMORY_REQUEST}
_spec_key = msgspec.msgpack.Encoder().encode
_DERIVED_KEPT = 4096
_derived_memo: dict[bytes, tuple[Resource, int, int, tuple[tuple[str, str, int], ...]]] = {}


def _derived(pod: Pod) -> tuple[Resource, int, int, tuple[tuple[str, str, int], ...]]:
    """What PodInfo derives from the containers alone (requests, scoring requests, host ports), kept
    per distinct set of containers: a ReplicaSet's pods share one spec, and every scheduling service builds a
    PodInfo for each pod it places on its view (computing the requests was most of a filter
    worker's fold). The Resource is shared between PodInfos: nothing may change it."""
    spec = pod.spec
    key = _spec_key((spec.containers, spec.init_containers, spec.overhead, spec.resources))  # not nodeName
    kept = _derived_memo.get(key)
    if kept is None:
        non_zero = compute_pod_requests(pod, _NON_MISSING)
        # Sidecars (restartable init containers) hold their host ports for the pod's lifetime.
        ports = tuple(
            (p.host_ip, p.protocol, p.host_port)
            for c in [*pod.spec.containers, *(ic for ic in pod.spec.init_containers if _is_restartable(ic))]
            for p in c.ports
            if p.host_port > 0
        )
        if len(_derived_memo) >= _DERIVED_KEPT:
            _derived_memo.clear()
        kept = _derived_memo[key] = (compute_pod_requests(pod), non_zero.milli_cpu, non_zero.memory, ports)
    return kept


class PodInfo:
    """A pod plus the derived data every plugin needs, computed once per pod."""

    __slots__ = (
        "pod", "uid", "namespace", "name", "key", "labels", "priority", "requests",
        "non_zero_milli_cpu", "non_zero_memory", "host_ports",
        "required_affinity_terms", "required_anti_affinity_terms",
        "preferred_affinity_terms", "preferred_anti_affinity_terms",
        "has_affinity", "has_required_anti_affinity", "start_time", "_signature",
    )

    def __init__(self, pod: Pod) -> None:
        self.pod = pod
        meta = pod.metadata
        self.namespace = meta.namespace
        self.name = meta.name
        self.key = f"{meta.namespace}/{meta.name}"
        self.uid = meta.uid or self.key
        self.labels = meta.labels
        self.priority = pod.spec.priority or 0
        self.requests, self.non_zero_milli_cpu, self.non_zero_memory, self.host_ports = _derived(pod)
        self.start_time = pod.status.start_time
        self._signature: bytes | None = None
        aff = pod.spec.affinity
        pa = aff.pod_affinity if aff else None
        paa = aff.pod_anti_affinity if aff else None
        self.has_affinity = pa is not None or paa is not None
        self.has_required_anti_affinity = bool(paa and paa.required_during_scheduling_ignored_during_execution)
        # Tuples, the empty one shared: most pods have no terms, and four lists a PodInfo were
        # most of what the garbage collector tracked for it.
        self.required_affinity_terms: tuple[AffinityTerm, ...] = (
            tuple(affinity_term(pod, t) for t in pa.required_during_scheduling_ignored_during_execution) if pa else ()
        )
        self.required_anti_affinity_terms: tuple[AffinityTerm, ...] = (
            tuple(affinity_term(pod, t) for t in paa.required_during_scheduling_ignored_during_execution) if paa else ()
        )
        self.preferred_affinity_terms: tuple[WeightedAffinityTerm, ...] = (
            tuple(WeightedAffinityTerm(affinity_term(pod, w.pod_affinity_term), w.weight)
                  for w in pa.preferred_during_scheduling_ignored_during_execution) if pa else ()
        )
        self.preferred_anti_affinity_terms: tuple[WeightedAffinityTerm, ...] = (
            tuple(WeightedAffinityTerm(affinity_term(pod, w.pod_affinity_term), w.weight)
                  for w in paa.preferred_during_scheduling_ignored_during_execution) if paa else ()
        )

    def placed(self, pod: Pod) -> PodInfo:
        """This pod as `pod`, which differs from it only in spec.nodeName and status (bound,
        nominated): the derived data, which depends on neither, is kept instead of recomputed."""
        copy = PodInfo.__new__(PodInfo)
        for slot in PodInfo.__slots__:
            setattr(copy, slot, getattr(self, slot))
        copy.pod = pod
        copy._signature = None
        copy.start_time = pod.status.start_time
        return copy

    def signature(self) -> bytes:
        """The pod's spec, encoded: equal for pods that node-local plugins cannot tell apart."""
        sig = self._signature
        if sig is None:
            sig = self._signature = msgspec.json.encode(self.pod.spec)
        return sig

    def __repr__(self) -> str:
        return f"PodInfo({self.key}, priority={self.priority})"


__all__ = ["EVERYTHING", "AffinityTerm", "PodInfo", "WeightedAffinityTerm", "affinity_term", "compute_pod_requests"]
