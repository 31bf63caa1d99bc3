"""Which stored events a rebuilt log gets back, and at which offsets. Pure: no broker, no database.

The embedded broker keeps its log in memory; the event store keeps every event the projector
stored, at its (topic, partition, offset). A broker that starts empty gets every kept topic back
from the store (`shared.adapters.log_restore`), each event at its recorded offset, so watermarks,
replay and the projector's stored positions stay true. An offset with no stored event (a record that
was dead-lettered, or a second copy of an event) gets a `GAP` filler.

The projector stores each partition in order, but partitions independently: a crash can leave an
event stored while the event it rests on, on another partition, is not. Two such dependencies hold
the services' state together, and `causally_complete` keeps only events whose ground is kept:
- every event about a pod (its bind request, bind outcome, nomination, eviction, deletion,
  attempts) rests on the pod's PodSubmitted (no pod, nothing to bind or count);
- a bind's outcome (PodBound, BindRejected) rests on its BindRequested, which carries the pod the
  binder counts against the node.
An event dropped so is lost with the unstored tail of the log: its pod, if the gateway accepted it,
is published again from the accepted intents and scheduled anew.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence

from .catalogue import (
    BindRejected,
    BindRequested,
    PodBound,
    PodDeleted,
    PodEvicted,
    PodNominated,
    PodSubmitted,
    PreemptionDecided,
    SchedulingAttempted,
)
from .envelope import Envelope, ReceivedEvent
from .topics import PREEMPTION_REQUESTS

TopicPartition = tuple[str, int]


def pod_of(env: Envelope) -> str | None:
    """The uid of the pod an event is about, when it rests on that pod's submission."""
    p = env.payload
    if isinstance(p, PodDeleted | PodNominated | PodEvicted):
        return p.uid
    if isinstance(p, BindRequested | PodBound | BindRejected | SchedulingAttempted):
        return p.pod_uid
    return None


def causally_complete(events: Sequence[ReceivedEvent]) -> tuple[list[ReceivedEvent], list[ReceivedEvent]]:
    """(kept, dropped), each in the given order: an event is kept when the events it rests on are."""
    submitted = {e.envelope.payload.pod.metadata.uid for e in events if isinstance(e.envelope.payload, PodSubmitted)}
    requests: set[uuid.UUID] = {
        e.envelope.event_id for e in events
        if isinstance(e.envelope.payload, BindRequested) and e.envelope.payload.pod_uid in submitted
    }
    kept: list[ReceivedEvent] = []
    dropped: list[ReceivedEvent] = []
    for e in events:
        env = e.envelope
        uid = pod_of(env)
        grounded = uid is None or uid in submitted
        if grounded and isinstance(env.payload, PodBound | BindRejected):
            grounded = env.causation_id in requests
        (kept if grounded else dropped).append(e)
    return kept, dropped


def referenced_ends(kept: Iterable[ReceivedEvent]) -> dict[TopicPartition, int]:
    """How far each partition must run for the positions stored events name to mean what they
    meant: a watermark (`PreemptionRequested`, `LateBatchDecided`, a decision's `folded`) counts a
    partition's records up to its offset, and a preemption decision's `request_at` and `in_flight`,
    and its nominations' and evictions' `request_at`, name records of `preemption-requests`.

    The records past the last stored one on a partition were lost with the broker (the projector
    had not stored them): without fillers up to these ends, the next records written would take
    their offsets, and a stored position naming one of the lost ones would name a new record (a new
    request taken for an older one than a stored decision's, a watermark counting records it never
    saw)."""
    ends: dict[TopicPartition, int] = {}

    def reach(topic: str, partition: int, end: int) -> None:
        if end > ends.get((topic, partition), 0):
            ends[(topic, partition)] = end

    for e in kept:
        p = e.envelope.payload
        watermark = getattr(p, "watermark", None) or getattr(p, "folded", None) or {}
        for topic, offsets in watermark.items():
            for partition, offset in enumerate(offsets):
                reach(topic, partition, offset)
        request_at = getattr(p, "request_at", -1)
        if isinstance(request_at, int) and request_at >= 0:
            reach(PREEMPTION_REQUESTS, 0, request_at + 1)
        if isinstance(p, PreemptionDecided) and len(p.in_flight) >= 2:
            # Ascending runs of offsets (first, count, ...): the last one ends furthest.
            reach(PREEMPTION_REQUESTS, 0, p.in_flight[-2] + p.in_flight[-1])
    return ends


def partition_logs(kept: Iterable[ReceivedEvent], ends: Mapping[TopicPartition, int]
                   ) -> dict[TopicPartition, list[Envelope | None]]:
    """Each partition's records from offset 0 to its end: the event stored at that offset, or None
    (a filler). A partition ends after its last event, or at `ends` when that is further (the
    projector's position can pass offsets that hold no stored event)."""
    at: dict[TopicPartition, dict[int, Envelope]] = {}
    for e in kept:
        pos = e.position
        at.setdefault((pos.topic, pos.partition), {}).setdefault(pos.offset, e.envelope)
    logs: dict[TopicPartition, list[Envelope | None]] = {}
    for tp in sorted(set(at) | {tp for tp, end in ends.items() if end > 0}):
        events = at.get(tp, {})
        length = max(max(events, default=-1) + 1, ends.get(tp, 0))
        logs[tp] = [events.get(offset) for offset in range(length)]
    return logs
