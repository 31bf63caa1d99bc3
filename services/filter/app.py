"""The filter worker: the runtime's consume loop over `filter-requests` (one consumer group, so
starting or stopping a replica rebalances the shards live; resting while the queue sends it
nothing, `shared.protocol.resting`) and a follower of the whole cluster."""

from __future__ import annotations

from services.runtime import Handler, Rest, Service, ServiceConfig, run_service
from services.runtime.follower import LogFollower
from services.runtime.scheduler_config import profiles_from
from services.runtime.topics import require_topics
from shared.cluster import ClusterView
from shared.events import FILTER_REQUESTS, GATED_TOPICS, TopicRegistry
from shared.protocol.resting import REST_AFTER_S, REST_PACE_S, SPARE_AFTER_S

from .handlers import FilterHandler
from .settings import FilterSettings, load

FOLLOWED = GATED_TOPICS


def build(settings: FilterSettings, *, registry: TopicRegistry | None = None,
          serve_http: bool = True) -> tuple[Service, LogFollower, FilterHandler]:
    registry = registry or TopicRegistry(settings.base.topic_prefix)
    view = ClusterView()
    follower = LogFollower(settings.base, registry, FOLLOWED, view, gated=FOLLOWED, on_demand=True)
    config = ServiceConfig(name=settings.base.service_name, group_id=settings.group_id, topics=[FILTER_REQUESTS],
                           serve_http=serve_http, fetch_timeout_ms=200,
                           rest=Rest(after_s=REST_AFTER_S, pace_s=REST_PACE_S, first_after_s=SPARE_AFTER_S))
    service = Service(settings.base, config, Handler(), registry=registry)
    handler = FilterHandler(view, profiles_from(settings.config, service.metrics.registry), follower.wait_reached,
                            producer=settings.base.service_name, watermark_wait_s=settings.watermark_wait_s)
    service.handler = handler
    return service, follower, handler


async def run(service: Service, follower: LogFollower) -> None:
    follower.start()
    try:
        await service.run()
    finally:
        await follower.stop()


async def main(settings: FilterSettings | None = None) -> None:
    settings = settings or load()
    await require_topics(settings.base)
    service, follower, _ = build(settings)
    follower.start()
    try:
        await run_service(service)
    finally:
        await follower.stop()
