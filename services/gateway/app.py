"""The gateway service: one aiohttp server for the API and the health and metrics endpoints.

    GET /healthz   200 while the server runs
    GET /readyz    200 when Postgres answers (the broker connection is made before serving)
    GET /metrics   Prometheus text format
    the Kubernetes-shaped API (handlers.py) and the event log and explain (debugging.py)

Every request but /healthz, /readyz (and /metrics unless BERTH_METRICS_AUTH) needs a token: the viewer
token reads, the admin token reads and writes (auth.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import ssl

from aiohttp import web
from aiokafka.errors import KafkaError
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from services.runtime.port_file import announce_port
from services.runtime.topics import require_topics
from shared.adapters.kafka import KafkaPublisher, make_producer
from shared.adapters.postgres import AcceptedIntents, PostgresEventStore, ReadModelQueries, make_engine
from shared.errors import BrokerUnavailable, ConfigurationError
from shared.events import TopicRegistry
from shared.ports import Publisher

from . import access_review, auth, limits
from .auth import Tokens
from .debugging import DebugRoutes
from .handlers import Routes, status
from .metrics import GatewayMetrics
from .settings import GatewaySettings, load
from .ui.routes import UiRoutes

log = logging.getLogger(__name__)

SHUTDOWN_GRACE_S = 2.0
"""How long requests in flight get to finish when the gateway stops."""
KEEPALIVE_S = 15.0
"""An idle connection is closed after this, and so is one whose request headers are not complete
by then: aiohttp has no other timeout for slow headers (its default is 3,630 s)."""


def build_app(settings: GatewaySettings, publisher: Publisher, engine: AsyncEngine, *,
              registry: TopicRegistry | None = None) -> web.Application:
    """The API wired to `publisher` and `engine`; the caller owns both."""
    registry = registry or TopicRegistry(settings.base.topic_prefix)
    metrics = GatewayMetrics()
    app = web.Application(client_max_size=settings.max_body_bytes)
    queries = ReadModelQueries(engine)
    tokens = Tokens(admin=settings.api_token, viewer=settings.viewer_token)
    store = PostgresEventStore(engine, page_size=5000)
    streams = limits.StreamSlots(settings.max_streams_per_client, settings.max_streams)
    Routes(settings, publisher, queries, registry, metrics, AcceptedIntents(engine), store, streams).install(app)
    app.middlewares.append(auth.middleware(tokens, status, metrics_auth=settings.metrics_auth))
    app.middlewares.append(limits.body_timeout(settings.body_timeout_s, status))  # after auth: token holders only
    DebugRoutes(store, queries, streams).install(app)
    UiRoutes(queries, store, tokens).install(app)
    access_review.install(app, tokens)

    async def healthz(request: web.Request) -> web.Response:
        return web.json_response({"ok": True, "service": settings.base.service_name})

    async def readyz(request: web.Request) -> web.Response:
        try:
            async with engine.connect() as conn:
                await conn.execute(text("SELECT 1"))
        except Exception as exc:  # any failure means "not ready"; the reason goes to the caller
            return web.json_response({"ready": False, "reason": str(exc)}, status=503)
        return web.json_response({"ready": True, "service": settings.base.service_name})

    async def metrics_endpoint(request: web.Request) -> web.Response:
        return web.Response(body=generate_latest(metrics.registry), headers={"Content-Type": CONTENT_TYPE_LATEST})

    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics_endpoint)
    return app


def server_tls(settings: GatewaySettings) -> ssl.SSLContext | None:
    """HTTPS with the configured certificate and key (TLS 1.2 at least), or None for plain HTTP."""
    if not settings.tls_cert_file:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(settings.tls_cert_file, settings.tls_key_file)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigurationError(f"BERTH_TLS_CERT_FILE/BERTH_TLS_KEY_FILE: cannot load "
                                 f"{settings.tls_cert_file}: {exc}") from None
    return context


async def main(settings: GatewaySettings | None = None) -> None:
    """Serve until SIGTERM/SIGINT, then stop accepting, flush the producer and close the database."""
    settings = settings or load()
    _, database_url = settings.base.require_endpoints()
    await require_topics(settings.base)
    producer = make_producer(settings.base, client_id=settings.base.service_name)
    try:
        await producer.start()
    except KafkaError as exc:
        raise BrokerUnavailable(f"gateway: cannot connect to Kafka: {exc}") from exc
    engine = make_engine(database_url)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    runner = web.AppRunner(build_app(settings, KafkaPublisher(producer, TopicRegistry(settings.base.topic_prefix),
                                                    max_record_bytes=settings.base.kafka_max_message_bytes),
                                     engine), access_log=None,
                            # Watches and waiting overview requests are cut after this on a stop.
                            shutdown_timeout=SHUTDOWN_GRACE_S, keepalive_timeout=KEEPALIVE_S)
    try:
        await runner.setup()
        tls = server_tls(settings)
        site = web.TCPSite(runner, settings.base.http_host, settings.base.http_port, ssl_context=tls)
        await site.start()
        sockets = getattr(site._server, "sockets", None)  # aiohttp tells the bound port only here
        port = sockets[0].getsockname()[1] if sockets else settings.base.http_port
        announce_port(settings.base, port)
        log.info("gateway: serving on %s://%s:%s", "https" if tls else "http", settings.base.http_host, port)
        await stop.wait()
    finally:
        with contextlib.suppress(Exception):
            await runner.cleanup()
        with contextlib.suppress(Exception):
            await producer.stop()
        await engine.dispose()
