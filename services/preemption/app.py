"""The preemption service: the runtime's consume loop over `preemption-requests` and a follower of
the whole cluster (and of its own past decisions, on `preemption`)."""

from __future__ import annotations

from services.runtime import Handler, Service, ServiceConfig, run_service
from services.runtime.follower import LogFollower
from services.runtime.scheduler_config import profiles_from
from services.runtime.topics import require_topics
from shared.adapters.extender_http import build_extenders
from shared.cluster import ClusterView
from shared.events import GATED_TOPICS, PREEMPTION, PREEMPTION_REQUESTS, TopicRegistry

from .handlers import PreemptionHandler, PreemptionMetrics
from .settings import PreemptionSettings, load

FOLLOWED = (*GATED_TOPICS, PREEMPTION)
LINGER_S = 1.0
"""The follower fetches only while requests come (a cluster that needs no preemption costs it
nothing), and goes on this long after the last one: pausing between requests that come every few
milliseconds would cost each one a pass to the log's ends."""


def build(settings: PreemptionSettings, *, registry: TopicRegistry | None = None,
          serve_http: bool = True) -> tuple[Service, LogFollower]:
    registry = registry or TopicRegistry(settings.base.topic_prefix)
    view = ClusterView()
    config = ServiceConfig(name=settings.base.service_name, group_id=settings.group_id, topics=[PREEMPTION_REQUESTS],
                           serve_http=serve_http, fetch_timeout_ms=20,
                           max_records=settings.batch_size)
    service = Service(settings.base, config, Handler(), registry=registry)
    handler = PreemptionHandler(view, profiles_from(settings.config, service.metrics.registry),
                                lambda w, t: follower.wait_reached(w, t, fold_received=True),
                                PreemptionMetrics(service.metrics.registry), producer=settings.base.service_name,
                                watermark_wait_s=settings.watermark_wait_s,
                                extenders=build_extenders(settings.config, lambda name: view.snapshot().get(name)))
    follower = LogFollower(settings.base, registry, FOLLOWED, view, lambda env, pos: handler.on_event(env),
                           gated=GATED_TOPICS, on_demand=True, linger_s=LINGER_S)
    service.handler = handler
    return service, follower


async def main(settings: PreemptionSettings | None = None) -> None:
    settings = settings or load()
    await require_topics(settings.base)
    service, follower = build(settings)
    follower.start()
    await follower.caught_up.wait()  # past decisions known before any request is answered
    try:
        await run_service(service)
    finally:
        await follower.stop()
