"""How the queue runs its cycles: each option's default written once, read from the environment by
`settings.load` and handed to `Scheduler` whole."""

from __future__ import annotations

from dataclasses import dataclass

from shared.queue.scheduling_queue import DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION

from .share import QueueShare

DEFAULT_BATCH = 1024
DEFAULT_GATHER_TIMEOUT_S = 30.0
DEFAULT_UNSCHEDULABLE_TIMEOUT_S = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION
DEFAULT_PREEMPTION_TIMEOUT_S = 300.0
DEFAULT_FEASIBLE_BUDGET = 200_000
"""Distinct walks × feasible nodes sought per batch: a walk's answer carries the names and raw
scores of the feasible nodes it found (about 20 bytes a node on the wire), once for all the pods
of the batch that only their names tell apart (`same_answers`), so a batch's answers stay a few MB."""
DEFAULT_PROPOSE_ABOVE_MS = 1.0
"""BERTH_QUEUE_PROPOSE=auto: propose once the queue's ranking costs more than this a pod. Measured
on two cores (`proposal_policy`): TopologySpreading's 0.30, faster ranked; PodAntiAffinity's
0.47–0.7 with 2,000 pods, no faster proposed; 1.3 and more with 4,000, faster proposed. At 0.4 and
0.6, slices of the first two crossed it now and then, and runs that switched were slower."""


@dataclass(frozen=True, slots=True)
class SchedulerOptions:
    batch_size: int = DEFAULT_BATCH
    """Pods evaluated per scatter/gather round trip (one in lockstep)."""
    feasible_budget: int = DEFAULT_FEASIBLE_BUDGET
    """A batch holds at most this many feasible nodes sought over its distinct walks: on a large
    cluster, fewer pods than `batch_size` where they differ."""
    pipeline_depth: int = 0
    """Batches at the filter workers while the one before them is merged and decided; 0: as many as
    keep the queue busy (`DepthGauge`), at most one per filter worker known (two with one) and
    `pipeline_most`."""
    pipeline_most: int = 0
    """With `pipeline_depth` 0, the most batches at the filter workers at once (0: no bound but the
    workers known). Where every process shares one machine, more than its cores beside the queue's
    only wait for CPU."""
    workers_most: int = 0
    """The most filter workers sent batches at once, the first in a fixed order (0: every one
    known). Where every process shares a few cores, a second busy worker only waits for a CPU and
    folds the whole log besides (`dispatch`)."""
    lockstep: bool = False
    """One pod in flight at a time, its outcome awaited before the next, with the simulator's
    logical clock: decisions then equal `berth simulate`'s on the same input."""
    seed: int = 0
    share: QueueShare = QueueShare()
    """Which of the queues sharing the cluster this one is (BERTH_QUEUE_PARTITION of
    BERTH_QUEUE_PARTITIONS), so which pods it schedules, which workers it sends to and which
    answers it reads."""
    propose: bool = False
    """Filter workers decide each batch and answer with a ranking per pod (BERTH_QUEUE_PROPOSE=1);
    off, they answer with the walks (feasible nodes and raw scores) and the queue ranks."""
    propose_above_ms: float | None = None
    """With `propose` off, propose while ranking a batch costs the queue more than this a pod
    (BERTH_QUEUE_PROPOSE=auto, BERTH_QUEUE_PROPOSE_ABOVE_MS; None: never)."""
    gather_timeout_s: float = DEFAULT_GATHER_TIMEOUT_S
    """A request whose worker stays silent this long is sent elsewhere."""
    unschedulable_timeout_s: float = DEFAULT_UNSCHEDULABLE_TIMEOUT_S
    """podMaxInUnschedulablePodsDuration: how long a pod sits unschedulable before a retry
    (upstream's 5 min)."""
    preemption_timeout_s: float = DEFAULT_PREEMPTION_TIMEOUT_S
    """How long a preemptor waits for its request's decision before it goes back to the queue (a
    request that will never be answered: dead-lettered, say). Not the unschedulable timeout: a
    backlogged preemption service answers late, and a preemptor released meanwhile asks again,
    which lengthens the backlog it is waiting on."""
