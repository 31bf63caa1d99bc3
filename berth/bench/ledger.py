"""What a run of the scheduling services left in the event log, read back from the broker: each pod's
end state, binds with and without an outcome, and the invariants every run must keep (no pod bound
twice, no node over-committed, every pending pod with an upstream-worded reason)."""

from __future__ import annotations

import uuid
from collections import defaultdict
from dataclasses import dataclass, field

from shared.adapters.kafka.reader import read_topic
from shared.binding.admission import is_admission
from shared.cluster import ClusterView
from shared.events import (
    BINDS,
    DECISIONS,
    NODES,
    PLACEMENTS,
    PODS,
    BindRejected,
    BindRequested,
    Envelope,
    PodBound,
    PodDeleted,
    PodEvicted,
    PodSubmitted,
    SchedulingAttempted,
    TopicRegistry,
)
from shared.settings import Settings

FOLDED = (NODES, PODS, PLACEMENTS)


@dataclass
class Ledger:
    view: ClusterView = field(default_factory=ClusterView)
    submitted: set[str] = field(default_factory=set)
    gone: set[str] = field(default_factory=set)
    bound_events: dict[str, set[uuid.UUID]] = field(default_factory=lambda: defaultdict(set))
    requested: dict[str, str] = field(default_factory=dict)
    """Bind attempt id → pod uid."""
    answered: set[str] = field(default_factory=set)
    admitted: set[str] = field(default_factory=set)
    """Pods created with spec.nodeName that their node admitted (not the scheduler's binds)."""
    messages: dict[str, tuple[int, str | None]] = field(default_factory=dict)
    """Each pod's latest attempt: (attempt number, message; None when it chose a node)."""
    events: int = 0

    history: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    """Per pod, what happened to it (for failure messages)."""

    def fold(self, env: Envelope) -> None:
        self.events += 1
        p = env.payload
        uid = getattr(p, "pod_uid", None) or getattr(p, "uid", None)
        if isinstance(uid, str):
            self.history[uid].append(f"{type(p).__name__}{_detail(p)}")
        match p:
            case PodSubmitted():
                self.submitted.add(p.pod.metadata.uid)
            case PodDeleted():
                self.gone.add(p.uid)
            case PodEvicted():
                self.gone.add(p.uid)
            case PodBound():
                self.bound_events[p.pod_uid].add(env.event_id)
                self.answered.add(p.attempt_id)
                if is_admission(p.attempt_id):
                    self.admitted.add(p.pod_uid)
            case BindRejected():
                self.answered.add(p.attempt_id)
            case BindRequested():
                self.requested[p.attempt_id] = p.pod_uid
            case SchedulingAttempted():
                if p.attempt >= self.messages.get(p.pod_uid, (0, None))[0]:
                    self.messages[p.pod_uid] = (p.attempt, p.message)

    @property
    def bound(self) -> set[str]:
        """Pods on a node now: bound by the scheduler, or created there and admitted."""
        return {uid for uid in self.view.placed if uid not in self.gone}

    @property
    def scheduled(self) -> set[str]:
        """Pods bound by the scheduler during the run, still there."""
        return {uid for uid in self.bound_events if uid not in self.gone and uid not in self.admitted}

    @property
    def pending(self) -> dict[str, str | None]:
        """Pods the scheduler left pending, with their latest reason (not those created on a node,
        which their node admits or refuses)."""
        waiting = self.submitted - self.gone - self.bound - self.view.refused
        return {uid: self.messages.get(uid, (0, None))[1] for uid in waiting if not self.view.unadmitted(uid)}

    def settled(self) -> bool:
        """Every bind answered, every pod bound, gone or pending after an unschedulable attempt."""
        return self.requested.keys() <= self.answered and all(m is not None for m in self.pending.values())

    def problems(self) -> list[str]:
        out = [f"{uid} bound {len(ids)} times" for uid, ids in self.bound_events.items() if len(ids) > 1]
        out += [f"{uid} pending without an upstream reason: {m!r}" for uid, m in self.pending.items()
                if m is None or not m.startswith(f"0/{len(self.view.nodes)} nodes are available: ")]
        out += [f"bind {a} has no outcome: {self.history[self.requested[a]]}"
                for a in sorted(self.requested.keys() - self.answered)]
        for info in self.view.nodes.values():
            if (info.requested.milli_cpu > info.allocatable.milli_cpu or info.requested.memory > info.allocatable.memory
                    or len(info.pods) > info.allocatable.allowed_pod_number):
                out.append(f"node {info.name} over-committed")
        return out


def _detail(p: object) -> str:
    if isinstance(p, SchedulingAttempted):
        return f"#{p.attempt}({p.node_name or p.message})"
    node = getattr(p, "node_name", None)
    return f"({node})" if node else ""


async def read_ledger(settings: Settings, registry: TopicRegistry) -> Ledger:
    ledger = Ledger()
    for topic in (NODES, PODS, PLACEMENTS, BINDS, DECISIONS):
        async for position, env, _ in read_topic(settings, topic, registry=registry):
            if isinstance(env, Envelope):
                ledger.fold(env)
                if topic in FOLDED:
                    ledger.view.apply(env, position)
    return ledger


async def read_envelopes(settings: Settings, registry: TopicRegistry, topics: tuple[str, ...]) -> list[Envelope]:
    out: list[Envelope] = []
    for topic in topics:
        async for _, env, _ in read_topic(settings, topic, registry=registry):
            if isinstance(env, Envelope):
                out.append(env)
    return out
