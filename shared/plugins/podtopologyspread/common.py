"""Constraint compilation and node-inclusion rules shared by PodTopologySpread's filter and score
paths (upstream podtopologyspread/common.go)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.model import TopologySpreadConstraint
from shared.model.meta import LabelSelector, LabelSelectorRequirement
from shared.model.selectors import Selector, compile_label_selector, selector_from_set
from shared.plugins.nodeaffinity.plugin import RequiredNodeAffinity
from shared.plugins.tainttoleration.helpers import do_not_schedule, find_matching_untolerated_taint

LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

DefaultSelectorFn = Callable[[PodInfo], Selector | None]
"""The selector of the Services/ReplicaSets/StatefulSets/ReplicationControllers owning a pod
(upstream helper.DefaultSelector); None when none is known."""


class Constraint:
    """A topology spread constraint with its selector compiled and policies resolved."""

    __slots__ = ("max_skew", "topology_key", "selector", "min_domains", "honor_node_affinity",
                 "honor_node_taints", "is_hostname")

    def __init__(self, max_skew: int, topology_key: str, selector: Selector, min_domains: int = 1,
                 honor_node_affinity: bool = True, honor_node_taints: bool = False) -> None:
        self.max_skew = max_skew
        self.topology_key = topology_key
        self.selector = selector
        self.min_domains = min_domains
        self.honor_node_affinity = honor_node_affinity
        self.honor_node_taints = honor_node_taints
        self.is_hostname = topology_key == LABEL_HOSTNAME

    def with_selector(self, selector: Selector) -> Constraint:
        return Constraint(self.max_skew, self.topology_key, selector, self.min_domains,
                          self.honor_node_affinity, self.honor_node_taints)

    def __repr__(self) -> str:
        return (f"Constraint({self.topology_key}, maxSkew={self.max_skew}, minDomains={self.min_domains}, "
                f"{self.selector!r})")


def _merged_selector(c: TopologySpreadConstraint, pod_labels: Mapping[str, str]) -> Selector:
    """The constraint's selector with matchLabelKeys added as equality requirements on the pod's
    own values. As upstream's mergeLabelSetWithSelector, a nil selector contributes nothing, so
    the keys alone then select."""
    match_labels = {k: pod_labels[k] for k in c.match_label_keys if k in pod_labels}
    if not match_labels:
        return compile_label_selector(c.label_selector)
    if c.label_selector is None:
        return selector_from_set(match_labels)
    extra = [LabelSelectorRequirement(key=k, operator="In", values=[v]) for k, v in match_labels.items()]
    merged = LabelSelector(match_labels=c.label_selector.match_labels,
                           match_expressions=[*c.label_selector.match_expressions, *extra])
    return compile_label_selector(merged)


def filter_constraints(constraints: Iterable[TopologySpreadConstraint], pod_labels: Mapping[str, str],
                       action: str) -> list[Constraint]:
    """The constraints whose whenUnsatisfiable is `action`, compiled (filterTopologySpreadConstraints)."""
    out: list[Constraint] = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        out.append(Constraint(
            max_skew=c.max_skew,
            topology_key=c.topology_key,
            selector=_merged_selector(c, pod_labels),
            min_domains=c.min_domains if c.min_domains is not None else 1,
            honor_node_affinity=(c.node_affinity_policy or HONOR) == HONOR,
            honor_node_taints=(c.node_taints_policy or IGNORE) == HONOR,
        ))
    return out


def node_labels_match_spread_constraints(labels: Mapping[str, str], constraints: Sequence[Constraint]) -> bool:
    """Whether the node carries every constraint's topology key."""
    for c in constraints:
        if c.topology_key not in labels:
            return False
    return True


def selector_key(selector: Selector) -> tuple[str, bool]:
    """Equal for selectors that select alike, so constraints sharing one count each node once."""
    return selector.text, selector.nothing


def count_pods_match_selector(pods: Iterable[PodInfo], selector: Selector, namespace: str) -> int:
    """Pods of `namespace` the selector matches; terminating pods do not count."""
    if selector.nothing:
        return 0
    matches = selector.matches
    n = 0
    for p in pods:
        if p.namespace == namespace and matches(p.labels) and p.pod.metadata.deletion_timestamp is None:
            n += 1
    return n


def matching_on_node(node: NodeInfo, selector: Selector, namespace: str, seen: dict[tuple[str, bool], int]) -> int:
    """The node's pods of `namespace` that `selector` matches, counted once per node for the
    selectors that select alike (`seen`: the node's counts so far, by `selector_key`)."""
    key = selector_key(selector)
    n = seen.get(key, -1)
    if n < 0:
        n = seen[key] = count_pods_match_selector(node.pods, selector, namespace) if node.pods else 0
    return n


def match_node_inclusion_policies(c: Constraint, pod: PodInfo, node: NodeInfo, required: RequiredNodeAffinity) -> bool:
    """Whether the node counts as a domain member for `c` under nodeAffinityPolicy/nodeTaintsPolicy."""
    if c.honor_node_affinity and not required.matches(node):
        return False
    if c.honor_node_taints and node.taints and find_matching_untolerated_taint(
            node.taints, pod.pod.spec.tolerations, do_not_schedule) is not None:
        return False
    return True


def no_default_selector(pod: PodInfo) -> Selector | None:
    """Berth keeps no Services, ReplicaSets, StatefulSets or ReplicationControllers, so no
    controller selector is ever found: exactly upstream's outcome when its listers return nothing
    (an empty selector, hence no default constraints)."""
    return None


def build_default_constraints(defaults: Sequence[TopologySpreadConstraint], pod: PodInfo, action: str,
                              default_selector: DefaultSelectorFn) -> list[Constraint]:
    """Default constraints for a pod without its own, selecting the pods of its controllers."""
    if not defaults:
        return []
    selector = default_selector(pod)
    if selector is None or selector.empty or selector.nothing:
        return []
    constraints = filter_constraints(defaults, pod.labels, action)
    return [c.with_selector(selector) for c in constraints]


def pod_constraints(pod: PodInfo, action: str, defaults: Sequence[TopologySpreadConstraint],
                    default_selector: DefaultSelectorFn) -> list[Constraint]:
    """The pod's own constraints for `action`, or the defaults when it declares none at all."""
    own = pod.pod.spec.topology_spread_constraints
    if own:
        return filter_constraints(own, pod.labels, action)
    return build_default_constraints(defaults, pod, action, default_selector)
