"""The preemption handler: PreemptionRequested in; PreemptionDecided, the victims' PodEvicted and
the nomination changes out (upstream DefaultPreemption as PostFilter, over the whole cluster view).

The view is folded up to the request's watermark and on to every event received by then (the
positions are recorded in `folded`), and the queue's in-flight assumptions are overlaid, as a
filter worker does; the preemption's random candidate offset is drawn from the attempt's seed,
as the in-process simulator draws it. Each request is decided once: the decisions this service has
published are folded too (`answered`), so a request redelivered after a crash gets no second,
different decision: its first one stands.

A request's watermark can predate this service's own recent decisions (the queue asked before their
evictions and nominations reached it, or they are still unpublished: a batch's events go out when
it ends). Those decisions stay "in flight" until the view has folded
every event they published, and each new decision is made with them overlaid: their victims gone,
their nominations made. Without that, two preemptors would free room with the same victim. The
decision names the ones it overlaid by their requests' offsets (`in_flight`), so replay applies the
same (`shared.protocol.preemption_in_flight`).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Histogram

from services.runtime import Handler
from shared.cluster import ClusterView
from shared.events import (
    PODS,
    PREEMPTION,
    PREEMPTION_REQUESTS,
    AnyEvent,
    Envelope,
    ExtenderAnswer,
    OutgoingEvent,
    PodEvicted,
    PodNominated,
    PodRef,
    PreemptionDecided,
    PreemptionRequested,
    ReceivedEvent,
    derived_id,
    envelope,
)
from shared.framework.runtime import Framework
from shared.indexes.node_index import NodeIndexes
from shared.preemption.evaluator import PreemptionExtender
from shared.protocol.packed_failures import RejectionsMemo
from shared.protocol.preemption_extenders import RecordingExtender
from shared.protocol.preemption_in_flight import Effects, effects_of, offsets_as_runs, overlay
from shared.protocol.preemption_request import PreemptionOutcome, decide_preemption

from .settings import DEFAULT_WATERMARK_WAIT_S

log = logging.getLogger(__name__)

BEHIND_WAIT_S = 0.5
"""How long a request waits for its watermark after the one before it waited in vain."""


class PreemptionMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.attempts = Counter("scheduler_preemption_attempts", "Total preemption attempts in the cluster till now",
                                registry=registry)
        self.victims = Histogram("scheduler_preemption_victims", "Number of selected preemption victims",
                                 buckets=(1, 2, 4, 8, 16, 32, 64), registry=registry)


@dataclass(frozen=True)
class InFlight:
    """A decision's effects on the cluster, the ids of the events that carry them, and its request's
    offset on `preemption-requests` (-1: not known)."""

    events: frozenset[uuid.UUID]
    effects: Effects
    at: int


def in_flight(request_id: uuid.UUID, decided: PreemptionDecided) -> InFlight | None:
    """What a decision published (the ids are derived from its request's), None when nothing."""
    uid = decided.preemptor_uid
    events = [derived_id(request_id, "evict", v.uid) for v in decided.victims]
    events += [derived_id(request_id, "clear", c) for c in decided.cleared if c != uid]
    if decided.nominated_node or uid in decided.cleared:
        events.append(derived_id(request_id, "nominate"))
    if not events:
        return None
    return InFlight(frozenset(events), effects_of(decided), decided.request_at)


class PreemptionHandler(Handler):
    def __init__(self, view: ClusterView, profiles: Mapping[str, Framework],
                 wait_reached: Callable[[Mapping[str, list[int]], float], Awaitable[bool]],
                 metrics: PreemptionMetrics, *, producer: str = "preemption",
                 watermark_wait_s: float = DEFAULT_WATERMARK_WAIT_S,
                 extenders: Sequence[PreemptionExtender] = ()) -> None:
        self.view, self.profiles, self.wait_reached = view, profiles, wait_reached
        self.extender_answers: list[ExtenderAnswer] = []
        """What the preempt-verb extenders answered for the request being decided."""
        recording = [RecordingExtender(e, self.extender_answers) for e in extenders if e.supports_preemption()]
        for fwk in profiles.values():
            fwk.set_extenders(list(recording))
        self.metrics, self.producer, self.watermark_wait_s = metrics, producer, watermark_wait_s
        self.answered: set[str] = set()
        self.unpublished: dict[str, list[OutgoingEvent]] = {}
        """Attempt id → a decision's events until it is read back from the log: a batch handled
        again after a failure part way through hands them out again (same event ids)."""
        self.node_indexes = NodeIndexes()
        self.rejections = RejectionsMemo()
        self.in_flight: dict[str, InFlight] = {}
        """Attempt id → a decision whose effects the view has not folded yet."""
        self.folded_effects: set[uuid.UUID] = set()
        self._behind_until = 0.0
        """Until when (monotonic) requests are waited for `BEHIND_WAIT_S` only: a wait for a
        request's watermark ran out, and a batch of them would wait a whole `watermark_wait_s`
        each. It ends once one is reached, or `watermark_wait_s` after the wait that ran out (a
        view steadily slower than the brief wait is then waited for in full again)."""

    def on_event(self, env: Envelope) -> None:
        """An event the follower folded: a decision read back (after a restart, the only record of
        what is in flight), or one of the evictions and nominations decisions publish."""
        p = env.payload
        if isinstance(p, PodEvicted | PodNominated):
            self.folded_effects.add(env.event_id)
        elif isinstance(p, PreemptionDecided) and p.attempt_id:
            self.unpublished.pop(p.attempt_id, None)  # published: the log holds it
            if p.attempt_id in self.answered:
                return
            self.answered.add(p.attempt_id)
            flight = in_flight(env.causation_id, p) if env.causation_id is not None else None
            if flight is not None:
                self.in_flight[p.attempt_id] = flight

    def overlay(self) -> tuple[list[str], dict[str, str], list[int] | None]:
        """Drop the decisions the view now shows; overlay the rest in request order (a later one
        wins a nomination). Also their requests' offsets, None when one is not known (a decision an
        earlier build made): the decision then records the overlay itself.

        With every offset known, decisions are dropped in request order: one the view shows whole
        stays while an earlier one is overlaid, or the earlier one's nomination would be laid over
        the later one's clearing of it."""
        known = all(f.at >= 0 for f in self.in_flight.values())
        order = sorted(self.in_flight, key=lambda a: self.in_flight[a].at) if known else list(self.in_flight)
        for attempt_id in order:
            flight = self.in_flight[attempt_id]
            if not flight.events <= self.folded_effects:
                if known:
                    break
                continue
            # Its effects are needed no more: each event id is folded once, for one decision.
            self.folded_effects -= self.in_flight.pop(attempt_id).events
        flights = list(self.in_flight.values())
        known = all(f.at >= 0 for f in flights)
        if known:
            flights.sort(key=lambda f: f.at)
        evicting, nominating = overlay(f.effects for f in flights)
        self.view.set_preempting(evicting, nominating)
        return evicting, nominating, [f.at for f in flights] if known else None

    async def handle(self, event: ReceivedEvent) -> Sequence[OutgoingEvent]:
        req = event.payload
        if not isinstance(req, PreemptionRequested):
            return []  # `preemption-requests` carries nothing else
        if req.attempt_id in self.answered:
            return self.unpublished.get(req.attempt_id, [])
        behind = time.monotonic() < self._behind_until
        reached = await self.wait_reached(req.watermark, BEHIND_WAIT_S if behind else self.watermark_wait_s)
        if reached:
            self._behind_until = 0.0
        else:
            log.warning("preemption: %s decided before the view reached the queue's", req.attempt_id)
            if not behind:
                self._behind_until = time.monotonic() + self.watermark_wait_s
        if req.attempt_id in self.answered:
            # Its decision was read back just now: the follower fetches only while requests come.
            return self.unpublished.get(req.attempt_id, [])
        folded = self.view.off(req.watermark)  # replay folds to these when they are set
        self.view.set_assumed((a.pod_uid, a.node_name) for a in req.assumed)
        at = event.position.offset if event.position.topic == PREEMPTION_REQUESTS else -1
        out = await self.decide(event.envelope, req, folded, at)
        self.answered.add(req.attempt_id)
        self.unpublished[req.attempt_id] = out
        return out

    async def decide(self, cause: Envelope, req: PreemptionRequested,
                      folded: dict[str, list[int]], at: int) -> list[OutgoingEvent]:
        """`at`: the request's offset on `preemption-requests` (-1: not known)."""
        evicting, nominating, offsets = self.overlay()
        moved = bool(self.view.past(req.watermark) or evicting or nominating)
        self.extender_answers.clear()
        fwk = self.profiles.get(req.pod.spec.scheduler_name)
        try:
            if fwk is not None and fwk.extenders():
                # An extender's HTTP call blocks: decide on a thread. Requests are decided one at a
                # time, and the view's gated topics fold only when the next request's watermark is
                # waited for, so the view holds still meanwhile.
                outcome = await asyncio.to_thread(decide_preemption, fwk, self.view, req, moved=moved)
            else:
                outcome = decide_preemption(fwk, self.view, req, moved=moved, indexes=self.node_indexes,
                                            memo=self.rejections)
        except Exception as exc:
            # Answered all the same, evicting nobody: unanswered, the preemptor would wait out the
            # queue's preemption timeout, and the request, dead-lettered, would say nothing to it.
            log.exception("preemption: deciding %s failed", req.attempt_id)
            outcome = PreemptionOutcome(nominated="", message=f"preemption failed: {type(exc).__name__}: {exc}")
        uid = req.pod.metadata.uid
        out: list[OutgoingEvent] = []
        if outcome.attempted:
            self.metrics.attempts.inc()
        if outcome.nominated:
            self.metrics.victims.observe(len(outcome.victims))
            for v in outcome.victims:
                out.append(self._out(PODS, PodEvicted(uid=v.uid, preemptor_uid=uid, node_name=outcome.nominated,
                                                      request_at=at), cause, "evict", v.uid))
            for other in outcome.nominations_to_clear:
                out.append(self._out(PODS, PodNominated(uid=other.uid, node_name="", request_at=at),
                                     cause, "clear", other.uid))
            out.append(self._out(PODS, PodNominated(uid=uid, node_name=outcome.nominated, request_at=at),
                                 cause, "nominate"))
        elif outcome.clear_own:
            out.append(self._out(PODS, PodNominated(uid=uid, node_name="", request_at=at), cause, "nominate"))
        cleared = [o.uid for o in outcome.nominations_to_clear] if outcome.nominated else (
            [uid] if outcome.clear_own else [])
        decided = PreemptionDecided(
            preemptor_uid=uid, nominated_node=outcome.nominated, attempt_id=req.attempt_id, message=outcome.message,
            folded=folded, victims=[PodRef(uid=v.uid, namespace=v.namespace, name=v.name) for v in outcome.victims],
            cleared=cleared, request_at=at, extenders=list(self.extender_answers), fits=outcome.fits,
            in_flight=offsets_as_runs(offsets) if offsets is not None else [],
            evicting=evicting if offsets is None else [], nominating=nominating if offsets is None else {})
        flight = in_flight(cause.event_id, decided)
        if flight is not None:
            self.in_flight[req.attempt_id] = flight
        # The decision goes last: once the queue reads it, the evictions are on their way already.
        out.append(self._out(PREEMPTION, decided, cause, "decided"))
        return out

    def _out(self, topic: str, payload: AnyEvent, cause: Envelope, *parts: str) -> OutgoingEvent:
        env = envelope(payload, producer=self.producer, caused_by=cause,
                       event_id=derived_id(cause.event_id, *parts))
        return OutgoingEvent(topic, env)
