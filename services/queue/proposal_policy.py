"""Whether the filter workers propose the next batch (decide it as the queue would, the queue
checking each proposal) or answer with their walks for the queue to rank.

Proposing moves the ranking (PreScore, Score, the re-checks of a batch's later pods) from the
queue, the one serial process, to the workers, and costs them about what it saves the queue, plus
the queue's check of each proposal. It pays where the queue's ranking is dear: measured on two
cores with two workers, the queue's ranking cost SchedulingBasic 0.08 ms a pod, TopologySpreading
0.30 and PodAntiAffinity (4,000 pods) over 1.3, and proposals were slower for the first two (2,552
against 2,864 and 1,528–1,576 against 1,683–1,726 pods/s) and faster for the third (794–828
against 484–655). With `above_s` set, the queue ranks the first batches itself and measures that,
then proposes once its ranking costs more than `above_s` a pod, ranking one batch in
`PROBE_EVERY` itself to see whether it still does, and goes back to ranking once it costs half
that or less: a workload near the threshold would otherwise switch back and forth, and a run that
did was slower than either way (TopologySpreading, four workers: 1,479 pods/s, 54% proposed).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

PROBE_EVERY = 16
"""While proposing, one batch in this many is ranked by the queue, to measure its ranking again."""
WINDOW_PODS = 256
"""The ranking's cost is the median, pod by pod, of the latest measurements (each a slice of a
batch) that hold this many pods, about one batch: a slice slowed by something else (the first
batch warming the caches, a collection) does not decide, nor do lone pods (a batch of one pays a
whole batch's fixed costs), and nothing is proposed before `DECIDING_PODS` pods were measured."""
DECIDING_PODS = 64


@dataclass
class ProposalPolicy:
    always: bool = False
    """Propose every batch (BERTH_QUEUE_PROPOSE=1)."""
    above_s: float | None = None
    """Otherwise, propose from when the queue's ranking costs more than this a pod until it costs
    half of it (None: never)."""
    samples: deque[tuple[float, int]] = field(default_factory=deque)
    """The queue's CPU seconds a pod, and the pods, in the latest slices of batches it ranked itself
    (the fewest that hold `WINDOW_PODS` pods)."""
    _pods: int = field(default=0, init=False)
    """The pods of `samples`, kept as they come and go."""
    proposing: bool = False
    """Whether batches are proposed now (one in `PROBE_EVERY` ranked all the same)."""
    _proposed_since_probe: int = 0

    @property
    def rank_s(self) -> float:
        """What ranking a pod costs the queue: the samples' median, each weighed by its pods (0:
        fewer than `DECIDING_PODS` measured)."""
        total = self._pods
        if total < DECIDING_PODS:
            return 0.0
        counted, seconds = 0, 0.0
        for seconds, pods in sorted(self.samples):
            counted += pods
            if 2 * counted >= total:
                break
        return seconds

    def propose(self) -> bool:
        """Whether the next batch is proposed."""
        if self.always:
            return True
        if self.above_s is None:
            return False
        rank_s = self.rank_s
        if not self.proposing and rank_s > self.above_s:
            self.proposing, self._proposed_since_probe = True, 0
        elif self.proposing and rank_s <= self.above_s / 2:
            self.proposing = False
        if not self.proposing:
            return False
        self._proposed_since_probe += 1
        if self._proposed_since_probe < PROBE_EVERY:
            return True
        self._proposed_since_probe = 0
        return False

    @property
    def measures(self) -> bool:
        """Whether `ranked` is worth calling (the policy reads it)."""
        return not self.always and self.above_s is not None

    def ranked(self, pods: int, seconds: float) -> None:
        """The queue ranked `pods` itself (decided them from the walks) in `seconds` of CPU."""
        if pods <= 0:
            return
        self.samples.append((seconds / pods, pods))
        self._pods += pods
        while self._pods - self.samples[0][1] >= WINDOW_PODS:
            self._pods -= self.samples.popleft()[1]
