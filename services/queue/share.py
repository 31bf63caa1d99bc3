"""Which pods, workers and answers are one queue's when several share the cluster
(BERTH_QUEUE_PARTITIONS): each queue schedules a share of the pods with the whole cluster in view,
as several schedulers of one cluster do.

Which pods are its own is `shared.binding.queue_owner`'s rule: a pod whose required constraints
span nodes (pod affinity, anti-affinity over a zone, a hard topology spread) is the first queue's,
so that every such pod in flight is in one view; any other pod is queue k's when its uid hashes
to k. A queue's filter workers are a contiguous slice of `filter-requests`: the range assignor
gives each worker a contiguous run of partitions, so where each slice is whole runs
(`shares_hold_whole_runs`, which `berth` requires) no worker serves two queues, and each worker's
view follows one queue's watermarks. They answer on the queue's own partition of `shard-results`.

What one queue cannot see is what another decided and the binder has not yet answered. The binder,
the single writer per node, refuses a bind that would over-commit its node or break a required
anti-affinity scoped to the node; its queue has folded the bind that took the room by then, so the
pod is tried again at once, and after its backoff (as kube-scheduler's pods are when their bind
fails) if it is refused again before it is bound. What neither catches: a pod without such
constraints, decided by one queue, landing in the zone of a pod another queue placed in the same
instant whose required anti-affinity over that zone selects it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from shared.binding.queue_owner import belongs_to_first_queue, hard_default_spread, owning_queue
from shared.events import MOST_QUEUES, NODE_SHARDS, SHARD_RESULTS
from shared.events.partitioning import contiguous_share
from shared.framework.runtime import Framework
from shared.model import Pod


@dataclass(frozen=True, slots=True)
class QueueShare:
    index: int = 0
    count: int = 1
    together: frozenset[str] = frozenset()
    """Profiles (scheduler names) all of whose pods are the first queue's (`hard_default_spread`)."""

    def __post_init__(self) -> None:
        if not 1 <= self.count <= MOST_QUEUES:
            raise ValueError(f"queue partitions must be between 1 and {MOST_QUEUES}, got {self.count}")
        if not 0 <= self.index < self.count:
            raise ValueError(f"queue partition must be between 0 and {self.count - 1}, got {self.index}")

    @property
    def whole(self) -> bool:
        """The only queue: every pod, every worker, every answer."""
        return self.count == 1

    def serving(self, profiles: Mapping[str, Framework]) -> QueueShare:
        """This share for a queue that runs `profiles`: the pods of a profile that spreads them
        by default where the spread must not be violated go together (`hard_default_spread`)."""
        return replace(self, together=hard_default_spread(profiles))

    def owns(self, pod: Pod) -> bool:
        """Whether this queue schedules `pod`: the first queue every pod whose constraints span
        nodes (`spans_nodes`, or whose profile is one of `together`), the others by their uid's
        hash."""
        return self.whole or owning_queue(pod, self.count, self.together) == self.index

    def reads(self, topic: str, partition: int) -> bool:
        """Whether this queue consumes `partition` of `topic`: of `shard-results`, its own; of
        the rest (preemption's outcomes, keyed by uid, are few), all."""
        return self.whole or topic != SHARD_RESULTS or partition == self.index

    def spanning(self, pods: Iterable[Pod]) -> bool:
        """Whether any of `pods` is the first queue's for what it asks, not by its uid's hash (only
        the first queue holds such pods: the others need not look)."""
        return self.index == 0 and any(belongs_to_first_queue(p, self.together) for p in pods)

    def arc(self, num_nodes: int) -> int:
        """The nodes of this queue's own arc of the node order (all of them, alone)."""
        return num_nodes if self.whole else max(1, num_nodes // self.count)

    def shifted(self, start: int, num_nodes: int) -> int:
        """A batch's round-robin start, moved to this queue's own arc of the node order: queues
        whose walks began at the same node would walk the same nodes on views without each
        other's picks, and the binder would refuse the later of each pair they both chose."""
        return (start + self.index * num_nodes // self.count) % num_nodes if num_nodes else start

    @property
    def reply_partition(self) -> int | None:
        """The `shard-results` partition its workers answer on (None: keyed by batch id)."""
        return None if self.whole else self.index

    def filter_partitions(self, partitions: int = NODE_SHARDS) -> list[int]:
        """Its slice of `filter-requests`: the k-th of `count` contiguous shares (whole workers'
        runs where `shares_hold_whole_runs` says so for the number of workers)."""
        return list(contiguous_share(self.index, self.count, partitions))
