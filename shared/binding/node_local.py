"""Which constraints between pods the binder, the single writer per node, can check on one node,
and which pods have constraints it cannot.

Where several queues share a cluster, each decides on a view that lacks the other queues' binds in
flight. What a node's writer sees exactly is the pods committed to that node: so a required
anti-affinity term whose topology is the node itself (`kubernetes.io/hostname`) is checked there,
both ways, as InterPodAffinity's Filter would (the incoming pod's terms against the node's pods,
and the node's pods' terms against it). Constraints whose domain spans nodes (a zone's
anti-affinity, pod affinity, a hard topology spread) need every node's pods at once: the pods
that carry them are scheduled by one queue (`spans_nodes`), whose own view holds every such pod in
flight.

Terms that select namespaces by label are left to the queues: the binder does not follow the
namespaces' labels.
"""

from __future__ import annotations

from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import AffinityTerm, PodInfo
from shared.model import Pod
from shared.plugins.interpodaffinity import (
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
)
from shared.plugins.podtopologyspread.common import DO_NOT_SCHEDULE, LABEL_HOSTNAME


def spans_nodes(pod: Pod) -> bool:
    """Whether the pod has a required constraint on other pods that its node's binder cannot judge:
    pod affinity (whose first pod of a group is placed by seeing none anywhere), anti-affinity
    over a wider topology than the node or selecting namespaces by label, or a topology spread
    that must not be violated. A profile's default spread constraints are the caller's to add."""
    affinity = pod.spec.affinity
    if affinity is not None:
        together = affinity.pod_affinity
        if together is not None and together.required_during_scheduling_ignored_during_execution:
            return True
        anti = affinity.pod_anti_affinity
        if anti is not None and any(t.topology_key != LABEL_HOSTNAME or t.namespace_selector is not None
                                    for t in anti.required_during_scheduling_ignored_during_execution):
            return True  # terms the binder cannot judge on one node (`_on_node`)
    return any(c.when_unsatisfiable == DO_NOT_SCHEDULE for c in pod.spec.topology_spread_constraints)


def _on_node(term: AffinityTerm) -> bool:
    """On a node with a hostname, the term's domain is that node alone, and the binder can tell
    which pods it selects."""
    return term.topology_key == LABEL_HOSTNAME and term.namespace_selector.nothing


def anti_affinity_conflicts(pod: PodInfo, node: NodeInfo) -> list[str]:
    """InterPodAffinity's reasons the pod may not join the node's committed pods, of the
    node-scoped required anti-affinity terms (empty when none is broken)."""
    reasons: list[str] = []
    if LABEL_HOSTNAME not in node.labels:
        return reasons  # no term's domain is this node alone
    own = [t for t in pod.required_anti_affinity_terms if _on_node(t)]
    if own and any(t.matches(other) for other in node.pods for t in own):
        reasons.append(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
    if any(_on_node(t) and t.matches(pod)
           for other in node.pods_with_required_anti_affinity for t in other.required_anti_affinity_terms):
        reasons.append(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
    return reasons
