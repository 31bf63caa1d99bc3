"""The preemption handler: PreemptionRequested in; PreemptionDecided, the victims' PodEvicted and
the nomination changes out (upstream DefaultPreemption as PostFilter, over the whole cluster view).

The view is folded up to the request's watermark and the queue's in-flight assumptions overlaid,
as a filter worker does; the preemption's random candidate offset is drawn from the attempt's seed,
as the in-process simulator draws it. Each request is decided once: the decisions this service has
published are folded too (`answered`), so a request redelivered after a crash gets no second,
different decision: its first one stands.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence

from prometheus_client import CollectorRegistry, Counter, Histogram

from services.runtime import Handler
from shared.cluster import ClusterView, reach
from shared.events import (
    PODS,
    PREEMPTION,
    Envelope,
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
from shared.preemption.request import decide_preemption

log = logging.getLogger(__name__)


class PreemptionMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.attempts = Counter("scheduler_preemption_attempts", "Total preemption attempts in the cluster till now",
                                registry=registry)
        self.victims = Histogram("scheduler_preemption_victims", "Number of selected preemption victims",
                                 buckets=(1, 2, 4, 8, 16, 32, 64), registry=registry)


class PreemptionHandler(Handler):
    def __init__(self, view: ClusterView, profiles: Mapping[str, Framework],
                 wait_reached: Callable[[Mapping[str, list[int]], float], Awaitable[bool]],
                 metrics: PreemptionMetrics, *, producer: str = "preemption", watermark_wait_s: float = 10.0) -> None:
        self.view, self.profiles, self.wait_reached = view, profiles, wait_reached
        self.metrics, self.producer, self.watermark_wait_s = metrics, producer, watermark_wait_s
        self.answered: set[str] = set()

    def on_decision(self, env: Envelope) -> None:
        """A PreemptionDecided read back from the log (the follower calls this)."""
        if isinstance(env.payload, PreemptionDecided) and env.payload.attempt_id:
            self.answered.add(env.payload.attempt_id)

    async def handle_batch(self, events: Sequence[ReceivedEvent]) -> Sequence[OutgoingEvent]:
        """Requests in the order the queue made them (the watermarks grow), whichever partitions
        they came from: the view folds forwards only."""
        def made(event: ReceivedEvent) -> tuple[int, int]:
            p = event.payload
            return (0, reach(p.watermark)) if isinstance(p, PreemptionRequested) else (1, 0)
        out: list[OutgoingEvent] = []
        for event in sorted(events, key=made):
            out.extend(await self.handle(event))
        return out

    async def handle(self, event: ReceivedEvent) -> Sequence[OutgoingEvent]:
        req = event.payload
        if not isinstance(req, PreemptionRequested):
            return []  # our own decisions share the topic
        if req.attempt_id in self.answered:
            return []
        if not await self.wait_reached(req.watermark, self.watermark_wait_s):
            log.warning("preemption: %s decided before the view reached the queue's", req.attempt_id)
        folded = self.view.past(req.watermark)
        self.view.set_assumed((a.pod_uid, a.node_name) for a in req.assumed)
        out = self._decide(event.envelope, req, folded)
        self.answered.add(req.attempt_id)
        return out

    def _decide(self, cause: Envelope, req: PreemptionRequested, folded: dict[str, list[int]]) -> list[OutgoingEvent]:
        outcome = decide_preemption(self.profiles.get(req.pod.spec.scheduler_name), self.view, req)
        uid = req.pod.metadata.uid
        out: list[OutgoingEvent] = []
        if outcome.attempted:
            self.metrics.attempts.inc()
        if outcome.nominated:
            self.metrics.victims.observe(len(outcome.victims))
            for v in outcome.victims:
                out.append(self._out(PODS, PodEvicted(uid=v.uid, preemptor_uid=uid, node_name=outcome.nominated),
                                     cause, "evict", v.uid))
            for other in outcome.nominations_to_clear:
                out.append(self._out(PODS, PodNominated(uid=other.uid, node_name=""), cause, "clear", other.uid))
            out.append(self._out(PODS, PodNominated(uid=uid, node_name=outcome.nominated), cause, "nominate"))
        elif outcome.clear_own:
            out.append(self._out(PODS, PodNominated(uid=uid, node_name=""), cause, "nominate"))
        decided = PreemptionDecided(
            preemptor_uid=uid, nominated_node=outcome.nominated, attempt_id=req.attempt_id, message=outcome.message,
            folded=folded, victims=[PodRef(uid=v.uid, namespace=v.namespace, name=v.name) for v in outcome.victims])
        # The decision goes last: once the queue reads it, the evictions are on their way already.
        out.append(self._out(PREEMPTION, decided, cause, "decided"))
        return out

    def _out(self, topic: str, payload: object, cause: Envelope, *parts: str) -> OutgoingEvent:
        env = envelope(payload, producer=self.producer, caused_by=cause,  # type: ignore[arg-type]
                       event_id=derived_id(cause.event_id, *parts))
        return OutgoingEvent(topic, env)
