"""A recorded event log, indexed for replay: every event once, in storage order, and the records a
replayed decision is checked against.

Storage order is the event store's (`seq`), or for a log read from Kafka or an export, the events'
timestamps. A position in the history (`seq`) is an index into that order.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from shared.cluster import reach
from shared.events import (
    PREEMPTION_REQUESTS,
    Assumed,
    ExtenderAnswer,
    ExtendersAnswered,
    FilterBatchRequested,
    LateBatchDecided,
    PodSubmitted,
    PreemptionDecided,
    PreemptionRequested,
    ReceivedEvent,
    SchedulerStarted,
    SchedulingAttempted,
    ShardFiltered,
)
from shared.protocol.answers import Walk, decode_all, walks


@dataclass
class Recorded:
    """A SchedulingAttempted and where it sits in the history."""

    seq: int
    attempt_id: str
    at: datetime
    decision: SchedulingAttempted


@dataclass
class Batch:
    """One queue cycle: its filter request (the state it was decided on) and what came of it."""

    seq: int
    at: datetime
    request: FilterBatchRequested
    decisions: dict[str, Recorded] = field(default_factory=dict)
    """Pod uid → the decision recorded for it in this batch (a pod retried at once has none)."""
    answers: list[ShardFiltered] = field(default_factory=list)
    """The shards' filter-phase and score-phase answers, in the order the queue read them."""
    extenders: dict[str, list[ExtenderAnswer]] = field(default_factory=dict)
    """Pod uid → what the scheduler extenders answered for it in this cycle."""
    late: LateBatchDecided | None = None
    """Set when the cycle waited for its extenders and was decided later, on this view."""
    late_seq: int = 0

    def walks(self, phase: str, pod_uid: str) -> list[Walk]:
        """The walks the shards answered for one pod in this cycle's `phase` ("filter", "score"),
        decoded as the queue decodes them; a worker's decision reads here as a walk that found
        nothing (its error, if any), as its verdicts are not node by node."""
        return [w for a in self.answers if a.phase == phase
                for r, w in zip(a.results, walks(decode_all(a.results))) if r.pod_uid == pod_uid]

    @property
    def order(self) -> tuple[int, int]:
        """Cycles in the order the queue ran them: watermarks only grow; ties in storage order."""
        return (reach(self.request.watermark), self.seq)

    @property
    def proposed(self) -> bool:
        """Whether the queue took a worker's proposals (the batch decided on the request's view)
        for this cycle: the kind of its filter answer the queue read first (`answers` are in the
        order of their partition, which is the queue's), as it keeps the first."""
        first = next((a for a in self.answers if a.phase == "filter"), None)
        return first is not None and first.proposed

    @property
    def decided_order(self) -> tuple[int, int]:
        """Where its decisions come among the cycles: `order`, or the late decision's place."""
        return (reach(self.late.watermark), self.late_seq) if self.late is not None else self.order

    @property
    def decided_watermark(self) -> dict[str, list[int]]:
        return self.late.watermark if self.late is not None else self.request.watermark

    @property
    def decided_assumed(self) -> list[Assumed]:
        return self.late.assumed if self.late is not None else self.request.assumed


@dataclass
class PreemptionRecord:
    seq: int
    request: PreemptionRequested
    decided: PreemptionDecided | None = None
    at: int = -1
    """The request's offset on `preemption-requests`; -1 for one an earlier build published on
    `preemption`."""

    @property
    def order(self) -> tuple[int, int, int]:
        """The order the service decided requests in: their offsets on their one partition (an
        earlier build's by watermark, which grew with them, before)."""
        return (1, self.at, 0) if self.at >= 0 else (0, reach(self.request.watermark), self.seq)


class History:
    def __init__(self, events: Iterable[ReceivedEvent]) -> None:
        self.events: list[ReceivedEvent] = []
        self.partitions: dict[tuple[str, int], list[ReceivedEvent]] = {}
        """Events per (topic, partition), in offset order."""
        self.batches: dict[str, Batch] = {}
        self.preemptions: dict[str, PreemptionRecord] = {}
        self.configs: dict[str, SchedulerStarted] = {}
        self.pods: dict[str, PodSubmitted] = {}
        self.by_name: dict[str, list[str]] = {}
        """"namespace/name" → uids, in submission order (a name may be reused)."""
        self.decisions: list[Recorded] = []
        self.by_attempt: dict[str, Recorded] = {}
        """Attempt id (the decision's correlation id) → its decision."""
        self.decided_by_request: dict[int, PreemptionDecided] = {}
        """A preemption decision by its request's offset on `preemption-requests` (how later
        decisions name the ones in flight when they were made)."""
        seen: set[object] = set()
        answers: list[tuple[int, ShardFiltered]] = []
        """Each answer with its offset: a batch's answers share a partition (keyed by batch id),
        and their offsets are the order the queue read them in (it keeps the first)."""
        asked: list[ExtendersAnswered] = []
        # Requests and decisions sit on different topics: a log read partition by partition
        # may hold a decision before its request.
        decided: list[PreemptionDecided] = []
        late: list[tuple[int, LateBatchDecided]] = []
        for event in events:
            env = event.envelope
            if env.event_id in seen:
                continue
            seen.add(env.event_id)
            seq = len(self.events)
            self.events.append(event)
            pos = event.position
            self.partitions.setdefault((pos.topic, pos.partition), []).append(event)
            self._index(seq, event, answers, asked, decided)
            if isinstance(env.payload, LateBatchDecided):
                late.append((seq, env.payload))
        for events_of in self.partitions.values():
            events_of.sort(key=lambda e: e.position.offset)
        for outcome in decided:
            record = self.preemptions.get(outcome.attempt_id)
            if record is not None and record.decided is None:
                record.decided = outcome
            if outcome.request_at >= 0:
                self.decided_by_request.setdefault(outcome.request_at, outcome)
        for _, answer in sorted(answers, key=lambda a: a[0]):
            batch = self.batches.get(answer.batch_id)
            if batch is not None:
                batch.answers.append(answer)
        for seq, decided_late in late:
            batch = self.batches.get(decided_late.batch_id)
            if batch is not None and batch.late is None:
                batch.late, batch.late_seq = decided_late, seq
        for extenders in asked:
            batch = self.batches.get(extenders.batch_id)
            if batch is not None:
                batch.extenders.setdefault(extenders.pod_uid, list(extenders.answers))
        for recorded in self.decisions:
            if recorded.attempt_id:
                self.by_attempt.setdefault(recorded.attempt_id, recorded)
            batch = self.batches.get(recorded.decision.batch_id)
            if batch is not None:
                batch.decisions.setdefault(recorded.decision.pod_uid, recorded)

    def _index(self, seq: int, event: ReceivedEvent, answers: list[tuple[int, ShardFiltered]],
               asked: list[ExtendersAnswered], decided: list[PreemptionDecided]) -> None:
        env, p = event.envelope, event.envelope.payload
        match p:
            case FilterBatchRequested(phase="filter") if p.pods:  # an empty one only primes a worker
                self.batches.setdefault(p.batch_id, Batch(seq, env.timestamp, p))
            case ShardFiltered():
                answers.append((event.position.offset, p))
            case ExtendersAnswered():
                asked.append(p)
            case SchedulingAttempted():
                recorded = Recorded(seq, env.correlation_id or "", env.timestamp, p)
                self.decisions.append(recorded)
            case PreemptionRequested():
                at = event.position.offset if event.position.topic == PREEMPTION_REQUESTS else -1
                self.preemptions.setdefault(p.attempt_id, PreemptionRecord(seq, p, at=at))
            case PreemptionDecided():
                decided.append(p)
            case SchedulerStarted():
                self.configs.setdefault(p.config_hash, p)
            case PodSubmitted():
                uid = p.pod.metadata.uid
                if uid not in self.pods:
                    self.pods[uid] = p
                    self.by_name.setdefault(f"{p.pod.metadata.namespace}/{p.pod.metadata.name}", []).append(uid)

    def __len__(self) -> int:
        return len(self.events)

    def until(self, when: datetime) -> list[ReceivedEvent]:
        """The events stamped at or before `when`, in storage order."""
        return [e for e in self.events if e.envelope.timestamp <= when]

    def pod_name(self, uid: str) -> str:
        p = self.pods.get(uid)
        return f"{p.pod.metadata.namespace}/{p.pod.metadata.name}" if p is not None else uid

    def ordered_batches(self) -> list[Batch]:
        return sorted(self.batches.values(), key=lambda b: b.order)

    def preempting(self, uid: str, watermark: dict[str, list[int]]) -> bool:
        """Whether the cycle with this watermark asked preemption for the pod (its decision waits
        for the preemption's outcome, and is missing when the log ends first)."""
        return any(r.request.pod.metadata.uid == uid and r.request.watermark == watermark
                   for r in self.preemptions.values())

    def ordered_preemptions(self) -> list[PreemptionRecord]:
        return sorted(self.preemptions.values(), key=lambda r: r.order)
