"""The projector service: every topic into the Postgres read model and event store, exactly once."""

from __future__ import annotations

import logging

from sqlalchemy.ext.asyncio import AsyncEngine

from services.runtime import Service, ServiceConfig, run_service
from services.runtime.topics import require_topics
from shared.adapters.postgres import PostgresProjectionStore, make_engine
from shared.events import TopicRegistry

from .handlers import ProjectorHandler
from .settings import ProjectorSettings, load

log = logging.getLogger(__name__)


def build(settings: ProjectorSettings, engine: AsyncEngine, *, registry: TopicRegistry | None = None,
          serve_http: bool = True) -> Service:
    """The projector wired to `engine`; the caller runs it (`await service.run()`) and disposes the engine."""
    handler = ProjectorHandler(PostgresProjectionStore(engine), settings.group_id)
    config = ServiceConfig(name=settings.base.service_name, group_id=settings.group_id, topics=settings.topics,
                           serve_http=serve_http, max_records=settings.batch_records,
                           fetch_min_bytes=settings.fetch_min_bytes)
    return Service(settings.base, config, handler, registry=registry)


async def main(settings: ProjectorSettings | None = None) -> None:
    settings = settings or load()
    _, database_url = settings.base.require_endpoints()
    await require_topics(settings.base)
    engine = make_engine(database_url)
    try:
        await run_service(build(settings, engine))
    finally:
        await engine.dispose()
