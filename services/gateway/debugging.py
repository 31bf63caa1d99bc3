"""Debugging endpoints over the event store: the log itself and `explain`, as the CLI has them.

    GET /apis/berth.dev/v1/events?topic=&type=&pod=&after=&limit=[&follow=true&timeoutSeconds=]
        Events in storage order, each as an export line ({"topic", "partition", "offset", "event"})
        plus its `seq`. A page answers {"items", "next"}: pass `next` back as `after` to go on.
        `follow=true` streams JSON Lines as events are stored, until the client goes away or
        `timeoutSeconds` pass (as a Kubernetes watch does); a client holds a few such streams at
        most (limits.StreamSlots: 429 beyond).
    GET /apis/berth.dev/v1/namespaces/{ns}/pods/{name}/explain?attempt=K | now=true
        `berth explain`'s answer: the attempt rebuilt from the log by replay, or a fresh one now.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import TYPE_CHECKING, Any

import msgspec
from aiohttp import web

from shared.errors import InvalidInput, NotFound
from shared.events import TOPICS, ReceivedEvent
from shared.model.loader import load_objects, parse_documents
from shared.ports import EventStoreReader, ReadModelReader
from shared.replay.export_format import export_record

from .limits import StreamSlots
from .settings import MAX_STREAMS, MAX_STREAMS_PER_CLIENT

if TYPE_CHECKING:  # replay and explain bring in the whole core: imported at the first such request
    from shared.replay.history import History

TOPIC_NAMES = frozenset(spec.name for spec in TOPICS)
MAX_PAGE = 5000
FOLLOW_POLL_S = 0.25


def _int(request: web.Request, name: str, default: int, *, low: int, high: int | None = None) -> int:
    text = request.query.get(name)
    if text is None or text == "":
        return default
    try:
        value = int(text)
    except ValueError:
        raise InvalidInput("query", name, f"expected an integer, got {text!r}") from None
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise InvalidInput("query", name, f"must be {bound}, got {value}")
    return value


def _flag(request: web.Request, name: str) -> bool:
    return request.query.get(name, "").lower() in ("1", "true", "yes")


def _gone(request: web.Request) -> bool:
    return request.transport is None or request.transport.is_closing()


def _item(seq: int, event: ReceivedEvent) -> dict[str, Any]:
    return {"seq": seq, **export_record(event)}


class DebugRoutes:
    def __init__(self, store: EventStoreReader, queries: ReadModelReader,
                 follows: StreamSlots | None = None) -> None:
        self.store, self.queries = store, queries
        self.follows = follows or StreamSlots(MAX_STREAMS_PER_CLIENT, MAX_STREAMS)
        self._history: tuple[int, History] | None = None
        self._history_lock = asyncio.Lock()
        self._replay_lock = asyncio.Lock()
        """One replay at a time: each takes a core for as long as the log is long."""

    def install(self, app: web.Application) -> None:
        app.router.add_get("/apis/berth.dev/v1/events", self.events)
        app.router.add_get("/apis/berth.dev/v1/namespaces/{ns}/pods/{name}/explain", self.explain)
        app.router.add_get("/apis/berth.dev/v1/replay", self.replay)

    async def _pod_uid(self, text: str) -> str:
        """A uid as given, or the uid of the live (else latest) pod called namespace/name."""
        if "/" not in text:
            return text
        ns, name = text.split("/", 1)
        row = await self.queries.pod(ns, name)
        if row is None:
            raise NotFound("pods", text)
        return row.uid

    async def events(self, request: web.Request) -> web.StreamResponse:
        topics = [t for value in request.query.getall("topic", []) for t in value.split(",") if t]
        unknown = [t for t in topics if t not in TOPIC_NAMES]
        if unknown:
            raise InvalidInput("query", "topic",
                               f"unknown topic {unknown[0]!r}; known: {', '.join(sorted(TOPIC_NAMES))}")
        types = [t for value in request.query.getall("type", []) for t in value.split(",") if t]
        pod = request.query.get("pod")
        uid = await self._pod_uid(pod) if pod else None
        after = _int(request, "after", 0, low=0)
        limit = _int(request, "limit", 500, low=1, high=MAX_PAGE)
        if not _flag(request, "follow"):
            page = await self.store.page(after=after, limit=limit, topics=topics, types=types, pod_uid=uid)
            body = {"apiVersion": "berth.dev/v1", "kind": "EventList", "items": [_item(s, e) for s, e in page],
                    "next": page[-1][0] if page else after}
            return web.Response(body=msgspec.json.encode(body), content_type="application/json")
        timeout = _int(request, "timeoutSeconds", 0, low=0)
        with self.follows.slot(request.remote or ""):
            response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
            await response.prepare(request)
            deadline = time.monotonic() + timeout if timeout else None
            try:
                while (deadline is None or time.monotonic() < deadline) and not _gone(request):
                    page = await self.store.page(after=after, limit=limit, topics=topics, types=types, pod_uid=uid)
                    if page:
                        await response.write("".join(json.dumps(_item(s, e)) + "\n" for s, e in page).encode())
                        after = page[-1][0]
                    if len(page) < limit:
                        await asyncio.sleep(FOLLOW_POLL_S)
                await response.write_eof()
            except ConnectionResetError:  # the client went away mid-write: a normal end of a watch
                pass
        return response

    async def _current_history(self) -> History:
        """The whole log as a History, rebuilt only when the store has grown since the last call."""
        from shared.replay.history import History

        async with self._history_lock:
            last = await self.store.last_seq()
            if self._history is None or self._history[0] != last:
                events = [e async for _, e in self.store.read()]
                self._history = (last, await asyncio.to_thread(History, events))
            return self._history[1]

    async def explain(self, request: web.Request) -> web.Response:
        name = f"{request.match_info['ns']}/{request.match_info['name']}"
        now = _flag(request, "now")
        attempt = None if now or "attempt" not in request.query else _int(request, "attempt", 0, low=1)
        from shared.replay.explain import explain_attempt, explain_now

        history = await self._current_history()
        if now:
            explained = await asyncio.to_thread(explain_now, history, name)
        else:
            explained = await asyncio.to_thread(explain_attempt, history, name, attempt)
        return web.Response(body=msgspec.json.encode(explained), content_type="application/json")

    async def replay(self, request: web.Request) -> web.Response:
        """`berth replay` over the event store: every recorded decision made again; with `config`
        (a KubeSchedulerConfiguration, YAML or JSON), what that configuration would have changed."""
        from shared.replay.engine import Replayer

        what_if = None
        text = request.query.get("config", "").strip()
        if text:
            loaded = load_objects([("config", d) for d in parse_documents(text, "config")])
            if loaded.config is None:
                raise InvalidInput("config", "kind", "expected a KubeSchedulerConfiguration")
            what_if = loaded.config
        async with self._replay_lock:
            history = await self._current_history()
            report = await asyncio.to_thread(
                Replayer(history, what_if=what_if, what_if_name="config" if what_if else "").run)
        return web.Response(body=msgspec.json.encode(report), content_type="application/json")
