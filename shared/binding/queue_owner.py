"""Which of several queues sharing a cluster schedules a pod: the rule the queues route by, and
that `berth bench` reads to know which queues (and so which filter workers) a workload will use.

A pod whose required constraints span nodes (`shared.binding.node_local.spans_nodes`), or whose
profile spreads pods by default where the spread must not be violated (`hard_default_spread`), is
the first queue's, so that every such pod in flight is in one view; any other pod is queue k's
when its uid hashes to k.
"""

from __future__ import annotations

from collections.abc import Mapping

from shared.binding.node_local import spans_nodes
from shared.events.partitioning import kafka_partition
from shared.framework.runtime import Framework
from shared.model import Pod
from shared.model.config import DEFAULT_SCHEDULER_NAME
from shared.plugins.names import POD_TOPOLOGY_SPREAD
from shared.plugins.podtopologyspread.common import DO_NOT_SCHEDULE
from shared.plugins.podtopologyspread.plugin import PodTopologySpread


def owning_queue(pod: Pod, queues: int, together: frozenset[str] = frozenset()) -> int:
    """The queue of `queues` that schedules `pod`; `together`: the profiles (scheduler names) all
    of whose pods are the first queue's."""
    if queues <= 1 or belongs_to_first_queue(pod, together):
        return 0
    # Not the remembered `partition_for`: uids would crowd out the node names.
    return kafka_partition(pod.metadata.uid, queues)


def belongs_to_first_queue(pod: Pod, together: frozenset[str] = frozenset()) -> bool:
    """Whether `pod` is the first queue's for what it asks (its constraints span nodes, or its
    profile is one of `together`), whatever its uid."""
    return (pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME) in together or spans_nodes(pod)


def hard_default_spread(profiles: Mapping[str, Framework]) -> frozenset[str]:
    """The profiles (scheduler names) whose PodTopologySpread spreads pods by default where it must
    not be violated: any of their pods may carry such a spread, so all are the first queue's."""
    out = set()
    for name, fwk in profiles.items():
        spread = fwk.plugins.get(POD_TOPOLOGY_SPREAD)
        if isinstance(spread, PodTopologySpread) and any(
                c.when_unsatisfiable == DO_NOT_SCHEDULE for c in spread.default_constraints):
            out.add(name)
    return frozenset(out)
