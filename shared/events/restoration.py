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
    SchedulingAttempted,
)
from .envelope import Envelope, ReceivedEvent

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
