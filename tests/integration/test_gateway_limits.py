"""The gateway's request limits (docs/security.md, "Limits"), each met by a client that goes past
it: the answer is a Kubernetes Status naming the limit, and a refused request publishes nothing."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from sqlalchemy.ext.asyncio import AsyncEngine

from berth.cli import main as berth
from berth.stack.pgserver import drop_database
from services.gateway.app import SHUTDOWN_GRACE_S, build_app
from services.gateway.settings import GatewaySettings
from shared.adapters.memory import MemoryPublisher
from shared.adapters.postgres import make_engine
from shared.settings import load_service_settings

from .backends import Backend, create_test_database

pytestmark = pytest.mark.integration

TOKEN = "admin-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
APPLY = "/apis/berth.dev/v1/apply"
CLASS = "kind: PriorityClass\napiVersion: scheduling.k8s.io/v1\nmetadata: {name: high}\nvalue: 1000\n"


def _pod(name: str) -> str:
    return f"kind: Pod\nmetadata: {{name: {name}}}\nspec: {{priorityClassName: high, containers: [{{name: c}}]}}\n"


@dataclass
class Gateway:
    http: aiohttp.ClientSession
    publisher: MemoryPublisher
    url: str
    port: int

    def published(self, kind: str) -> int:
        return sum(1 for e in self.publisher.published if e.envelope.type == kind)


@pytest.fixture
async def database(backend: Backend) -> AsyncIterator[AsyncEngine]:
    name, url = await create_test_database(backend)
    engine = make_engine(url, pool_size=2)
    try:
        yield engine
    finally:
        await engine.dispose()
        await drop_database(backend.admin_database_url, name)


@contextlib.asynccontextmanager
async def serving(engine: AsyncEngine, server: dict[str, Any] | None = None, **limits: Any) -> AsyncIterator[Gateway]:
    """A gateway with these limits over `engine`, publishing to memory, served as `app.main` serves
    it (a handler is not cancelled when its client goes); `server`: more of aiohttp's settings."""
    # No projector: a write is never read back, so none waits for it (unless `limits` says so).
    settings = GatewaySettings(base=load_service_settings("gateway", {}), api_token=TOKEN,
                               **{"readable_within_s": 0.0, **limits})
    publisher = MemoryPublisher()
    runner = web.AppRunner(build_app(settings, publisher, engine), access_log=None,
                           shutdown_timeout=SHUTDOWN_GRACE_S, **(server or {}))
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    port = runner.addresses[0][1]
    url = f"http://127.0.0.1:{port}"
    http = aiohttp.ClientSession(url, headers=AUTH)
    try:
        yield Gateway(http, publisher, url, port)
    finally:
        await http.close()
        await runner.cleanup()


async def test_a_body_of_too_many_objects_is_413_and_publishes_nothing(database: AsyncEngine) -> None:
    async with serving(database, max_objects=3) as gw:
        refused = await gw.http.post(APPLY, data="---\n".join([CLASS, *map(_pod, "abc")]))
        body = await refused.json()
        assert refused.status == 413 and body["kind"] == "Status" and body["reason"] == "RequestEntityTooLarge"
        assert "holds 4 objects, more than the 3" in body["message"] and "BERTH_GATEWAY_MAX_OBJECTS" in body["message"]
        one_pod_too_many = await gw.http.post("/api/v1/namespaces/default/pods", data="---\n".join(map(_pod, "abcd")))
        assert one_pod_too_many.status == 413
        assert gw.publisher.published == []
        accepted = await gw.http.post(APPLY, data="---\n".join([CLASS, *map(_pod, "ab")]))
        assert accepted.status == 200 and gw.published("PodSubmitted") == 2


async def test_berth_apply_sends_a_file_of_more_objects_in_batches(database: AsyncEngine, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    async with serving(database, max_objects=10) as gw:
        monkeypatch.setenv("BERTH_URL", gw.url)
        monkeypatch.setenv("BERTH_TOKEN", TOKEN)
        monkeypatch.setenv("BERTH_APPLY_BATCH_OBJECTS", "10")
        pods = [_pod(f"p{i}") for i in range(25)]
        workload = tmp_path / "workload.yaml"

        # One bad object in the last batch: every batch is validated first, so none is applied.
        workload.write_text("---\n".join([CLASS, *pods, _pod("Bad_")]))
        assert await asyncio.to_thread(berth, ["apply", "-f", str(workload)]) == 2
        assert gw.publisher.published == [] and "Bad_" in capsys.readouterr().err

        workload.write_text("---\n".join([CLASS, *pods]))
        assert await asyncio.to_thread(berth, ["apply", "-f", str(workload)]) == 0
        out = capsys.readouterr()
        # 25 pods and the class (new, so created; no projector runs, so each batch sends it again).
        assert out.out.count(" created\n") == 26 and "in 3 batches; 28 events published" in out.err, out.err
        assert gw.published("PodSubmitted") == 25  # the class goes with each of the 3 batches

        # A client that batches above the gateway's cap is refused with the limit named.
        monkeypatch.setenv("BERTH_APPLY_BATCH_OBJECTS", "100")
        workload.write_text("---\n".join([CLASS, *(_pod(f"q{i}") for i in range(10))]))
        assert await asyncio.to_thread(berth, ["apply", "-f", str(workload)]) == 1
        assert "BERTH_GATEWAY_MAX_OBJECTS" in capsys.readouterr().err and gw.published("PodSubmitted") == 25


@contextlib.asynccontextmanager
async def raw_connection(gw: Gateway) -> AsyncIterator[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
    """A plain socket to the gateway, for a client that sends at its own pace."""
    reader, writer = await asyncio.open_connection("127.0.0.1", gw.port)
    try:
        yield reader, writer
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


async def _answer(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], dict[str, Any]]:
    """(status, headers, JSON body) of one answer."""
    head = (await reader.readuntil(b"\r\n\r\n")).decode().split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:] if line)}
    body = await reader.readexactly(int(headers["content-length"]))
    return int(head[0].split()[1]), headers, json.loads(body)


async def test_a_body_sent_too_slowly_is_408_and_publishes_nothing(database: AsyncEngine) -> None:
    body = "---\n".join([CLASS, _pod("slow")]).encode()
    async with serving(database, body_timeout_s=0.5) as gw, raw_connection(gw) as (reader, writer):
        writer.write(f"POST {APPLY} HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer {TOKEN}\r\n"
                     f"Content-Type: application/yaml\r\nContent-Length: {len(body)}\r\n\r\n".encode())

        async def trickle() -> None:
            for i in range(len(body)):  # a byte every 50 ms: the whole would take seconds
                writer.write(body[i:i + 1])
                await asyncio.sleep(0.05)

        started = time.monotonic()
        sending = asyncio.create_task(trickle())
        try:
            code, headers, status = await asyncio.wait_for(_answer(reader), 5)
        finally:
            sending.cancel()
        assert code == 408 and status["reason"] == "Timeout" and "BERTH_GATEWAY_BODY_TIMEOUT_S" in status["message"]
        assert headers["connection"] == "close" and time.monotonic() - started < 2
        assert gw.publisher.published == []


async def test_headers_sent_too_slowly_get_the_connection_closed(database: AsyncEngine) -> None:
    async with serving(database, server={"keepalive_timeout": 0.5}) as gw, raw_connection(gw) as (reader, writer):
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: gateway\r\n")  # and never the blank line
        started = time.monotonic()
        assert await asyncio.wait_for(reader.read(), 5) == b""
        assert time.monotonic() - started < 2


async def test_a_body_over_the_byte_limit_is_a_413_status(database: AsyncEngine) -> None:
    async with serving(database, max_body_bytes=64) as gw:
        refused = await gw.http.post(APPLY, data="---\n".join([CLASS, _pod("big")]))
        status = await refused.json()
        assert refused.status == 413 and "BERTH_GATEWAY_MAX_BODY_BYTES" in status["message"]
        assert gw.publisher.published == []


EVENTS = "/apis/berth.dev/v1/events"


async def _follow(gw: Gateway, **query: str) -> aiohttp.ClientResponse:
    return await gw.http.get(EVENTS, params={"follow": "true", **query})


async def _follow_once_free(gw: Gateway) -> aiohttp.ClientResponse:
    """A follow stream as soon as a slot is free again: the gateway sees a stream end within a poll."""
    deadline = time.monotonic() + 3
    while True:
        stream = await _follow(gw)
        if stream.status == 200 or time.monotonic() > deadline:
            return stream
        stream.release()
        await asyncio.sleep(0.05)


async def test_a_client_holds_a_few_follow_streams_and_gets_a_slot_back_when_one_ends(database: AsyncEngine) -> None:
    async with serving(database, max_streams_per_client=2) as gw:
        ending = await _follow(gw, timeoutSeconds="1")
        staying = await _follow(gw)
        assert (ending.status, staying.status) == (200, 200)
        refused = await _follow(gw)
        status = await refused.json()
        assert refused.status == 429 and refused.headers["Retry-After"] == "5"
        assert status["reason"] == "TooManyRequests" and "BERTH_GATEWAY_MAX_STREAMS_PER_CLIENT" in status["message"]
        assert status["details"] == {"retryAfterSeconds": 5}
        page = await gw.http.get(EVENTS)  # a page of the log is no stream: never refused
        assert page.status == 200 and (await page.json())["items"] == []

        await ending.read()  # its timeoutSeconds passed: the stream ended
        after_timeout = await _follow_once_free(gw)
        assert after_timeout.status == 200
        staying.close()  # its client went away
        after_leaving = await _follow_once_free(gw)
        assert after_leaving.status == 200
        after_timeout.close()
        after_leaving.close()


async def test_watches_and_follows_share_a_clients_streams(database: AsyncEngine) -> None:
    async with serving(database, max_streams_per_client=2) as gw:
        follow = await _follow(gw)
        watching = await gw.http.get("/api/v1/pods", params={"watch": "true"})
        assert (follow.status, watching.status) == (200, 200)
        refused = await gw.http.get("/api/v1/nodes", params={"watch": "true"})
        assert refused.status == 429 and "event log follows and watches" in (await refused.json())["message"]
        follow.close()
        watching.close()
