"""The health and metrics endpoints every service serves (aiohttp).

    GET /healthz   200 while the consume loop runs, 503 otherwise (liveness)
    GET /readyz    200 once the consumer joined its group and got an assignment (readiness)
    GET /metrics   Prometheus text format
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest


class HealthServer:
    def __init__(
        self,
        *,
        host: str,
        port: int,
        registry: CollectorRegistry,
        live: Callable[[], bool],
        ready: Callable[[], bool],
        describe: Callable[[], dict[str, Any]],
    ) -> None:
        self._host, self._port = host, port
        self._registry = registry
        self._live, self._ready, self._describe = live, ready, describe
        self._runner: web.AppRunner | None = None
        self.port: int | None = None

    @property
    def url(self) -> str:
        return f"http://{self._host}:{self.port}"

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/readyz", self._readyz)
        app.router.add_get("/metrics", self._metrics)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self._host, self._port)
        await site.start()
        sockets = getattr(site._server, "sockets", None)  # aiohttp tells the bound port only here
        assert sockets, "the site is not listening"
        self.port = int(sockets[0].getsockname()[1])

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.json_response({"ok": self._live(), **self._describe()}, status=200 if self._live() else 503)

    async def _readyz(self, request: web.Request) -> web.Response:
        ready = self._live() and self._ready()
        return web.json_response({"ready": ready, **self._describe()}, status=200 if ready else 503)

    async def _metrics(self, request: web.Request) -> web.Response:
        body = generate_latest(self._registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})
