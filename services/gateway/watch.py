"""Watches (`?watch=true`) over the event store, as the API server serves them.

The store's `seq` is the resourceVersion: a list carries the seq it was read at, and a watch from
resourceVersion R answers one event for every stored change after R to an object it selects, in
seq order, each object stamped with the seq of its change. The log is kept whole, so no
resourceVersion is too old to resume from (no "410 Gone"). Without a resourceVersion (or "0") a
watch first sends every selected object as ADDED, as the API server does.

A selector narrows the stream as the API server's watch cache does: an object that stops matching
is sent as DELETED, one that starts matching as ADDED. A change whose event holds the whole object
(a pod's submission, a node's upsert) sends the object as it left it; any other sends the read
model's state of it when the change is read, which may already be later than the change. An object
is always sent ADDED before any change to it, even where the store holds a change (a pod's bind)
before its creation: the projector orders events across partitions within one batch only.

Concurrent projector transactions may commit seqs out of order, and a refused duplicate leaves a
seq unused for ever: a watch reads past a gap in the seqs only once it has stayed open for
GAP_WAIT_S, so a change still being committed is never skipped.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec
from aiohttp import web

from shared.errors import InvalidInput
from shared.ports import EventStoreReader

from . import tables
from .params import whole_number

GAP_WAIT_S = 2.0
POLL_S = 0.2
BOOKMARK_S = 10.0
PAGE = 1000
DEFAULT_TIMEOUT_S = 1800
MAX_TIMEOUT_S = 3600

Objects = Callable[[Sequence[str]], Awaitable[dict[str, dict[str, Any]]]]
Sent = tuple[str, str, dict[str, Any] | None, int]
"""A change as a watch sends it: the object's key, the action, the object, the seq."""


@dataclass(frozen=True, slots=True)
class Watched:
    """One watchable kind: which stored events change it, and how to read its objects."""

    kind: str
    api_version: str
    actions: Mapping[str, str]
    """Event type -> ADDED, MODIFIED or DELETED."""
    key: Callable[[str, dict[str, Any]], str]
    """The object an event (type, payload) is about: a pod's uid, a node's name."""
    load: Objects
    """The current objects of these keys (rendered as the API shows them)."""
    everything: Callable[[], Awaitable[dict[str, dict[str, Any]]]]
    stub: Callable[[str], dict[str, Any]]
    """The metadata that names an object by its key alone (a node's name, a pod's uid)."""
    gone: Callable[[dict[str, Any]], bool] = lambda obj: False
    """Whether an object read now is already deleted (a pod's row outlives it): a later change
    to it is no reason to send it again."""
    at_change: Callable[[str, dict[str, Any]], dict[str, Any] | None] = lambda kind, payload: None
    """The object as an event leaves it, when the event holds all of it (a pod's submission, a
    node's upsert): sent instead of the read model's possibly later state."""

    @property
    def created(self) -> tuple[str, ...]:
        return tuple(t for t, a in self.actions.items() if a == "ADDED")

    @property
    def deleted(self) -> tuple[str, ...]:
        return tuple(t for t, a in self.actions.items() if a == "DELETED")


def stable(rows: Sequence[tuple[int, str, Any]], after: int, gaps: dict[int, float],
           now: float) -> list[tuple[int, str, Any]]:
    """The rows a watch may deliver: those up to the first gap in the seqs that has been open for
    less than GAP_WAIT_S (`gaps` remembers when each was first seen)."""
    out = []
    expected = after + 1
    for row in rows:
        if row[0] != expected:
            first = gaps.setdefault(expected, now)
            if now - first < GAP_WAIT_S:
                break
            del gaps[expected]
        out.append(row)
        expected = row[0] + 1
    return out


@dataclass
class Selection:
    """Which objects the watcher currently sees, to turn changes into the events it should get."""

    matches: Callable[[dict[str, Any]], bool]
    seen: set[str] = field(default_factory=set)

    def event(self, key: str, action: str, obj: dict[str, Any]) -> str | None:
        if action != "DELETED" and self.matches(obj):
            kind = "MODIFIED" if key in self.seen else "ADDED"
            self.seen.add(key)
            return kind
        if key in self.seen:
            self.seen.discard(key)
            return "DELETED"
        return None


def _stamped(obj: dict[str, Any], seq: int) -> dict[str, Any]:
    return {**obj, "metadata": {**(obj.get("metadata") or {}), "resourceVersion": str(seq)}}


def _resource_version(request: web.Request) -> int | None:
    text = request.query.get("resourceVersion", "")
    if text in ("", "0"):
        return None
    if not (text.isascii() and text.isdigit()):
        raise InvalidInput("request", "resourceVersion", f"expected a resourceVersion from a list or watch, "
                                                         f"got {text!r}")
    return int(text)


def _timeout(request: web.Request) -> int:
    text = request.query.get("timeoutSeconds", "")
    if not text:
        return DEFAULT_TIMEOUT_S
    return min(whole_number(text, "timeoutSeconds"), MAX_TIMEOUT_S) or DEFAULT_TIMEOUT_S


class WatchStream:
    """One client's watch: writes its events as JSON lines until the client goes or time runs out."""

    def __init__(self, request: web.Request, watched: Watched, store: EventStoreReader,
                 matches: Callable[[dict[str, Any]], bool],
                 in_scope: Callable[[dict[str, Any]], bool] = lambda obj: True) -> None:
        self.request, self.watched, self.store = request, watched, store
        self.selection = Selection(matches)
        self.in_scope = in_scope
        """The URL's part of `matches` (its namespace): all an object known by its key alone can be
        judged by."""
        self.as_table = tables.wants_table(request.headers.get("Accept", ""))
        self.include = (tables.include_object(request.query) if self.as_table
                        else tables.INCLUDE_OBJECT[0])  # read by Tables alone, as a plain list leaves it
        self.bookmarks = request.query.get("allowWatchBookmarks", "") == "true"
        self.start = _resource_version(request)
        self.deadline = time.monotonic() + _timeout(request)
        self.last: dict[str, dict[str, Any]] = {}
        """The last object sent for each key: what a DELETED carries once the object is gone."""
        self.gone_since_start: set[str] = set()
        """Objects that existed at the start version but were deleted before the watch read them:
        their deletion is still a change after that version, sent with the object's name alone."""
        self.held: set[str] = set()
        """Objects whose changes were held back until their creation, stored later, is sent."""

    async def serve(self) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(self.request)
        try:
            pos = await self._begin(response)
            await self._follow(response, pos)
            await response.write_eof()
        except (ConnectionResetError, asyncio.CancelledError):  # the client went away: a normal end
            pass
        return response

    async def _begin(self, response: web.StreamResponse) -> int:
        if self.start is None:
            pos = await self.store.last_seq()
            current = await self.watched.everything()
            await self.send(response, [(key, "ADDED", obj, pos) for key, obj in current.items()])
            return pos
        live = await self.store.live_keys(at=self.start, created=self.watched.created, deleted=self.watched.deleted)
        loaded = await self.watched.load(sorted(live))
        for key, obj in loaded.items():
            self.selection.event(key, "ADDED", obj)
            self.last[key] = obj
        self.gone_since_start = live - loaded.keys()
        return self.start

    async def _follow(self, response: web.StreamResponse, pos: int) -> None:
        gaps: dict[int, float] = {}
        quiet_since = time.monotonic()
        types = list(self.watched.actions)
        while time.monotonic() < self.deadline and not self._gone():
            rows = stable(await self.store.changes(after=pos, limit=PAGE, types=types), pos, gaps, time.monotonic())
            changes = [(seq, t, p) for seq, t, p in rows if p is not None]
            if changes:
                keys = sorted({self.watched.key(t, p) for _, t, p in changes})
                objects = await self.watched.load(keys)
                await self.send(response, await self.created_first(changes, objects))
                quiet_since = time.monotonic()
            if rows:
                pos = rows[-1][0]
            if len(rows) < PAGE:
                if self.bookmarks and time.monotonic() - quiet_since >= BOOKMARK_S:
                    await self._write(response, "BOOKMARK", {"kind": self.watched.kind,
                                                             "apiVersion": self.watched.api_version,
                                                             "metadata": {"resourceVersion": str(pos)}})
                    quiet_since = time.monotonic()
                await asyncio.sleep(POLL_S)

    async def created_first(self, changes: Sequence[tuple[int, str, Any]],
                             objects: Mapping[str, dict[str, Any]]) -> list[Sent]:
        """A page's changes as they are sent. A change to an object this watch has not met yet,
        stored before the object's creation or while that is not stored yet (the projector orders
        each batch by time, but a later batch can carry an earlier event of another partition), is
        held back: the object is sent ADDED as created first, then MODIFIED as the read model has
        it. The store is asked once a page, for the objects the page changes before meeting them."""
        def met_before(key: str) -> bool:
            return key in self.last or key in self.gone_since_start
        page: set[str] = set()
        unmet: set[str] = set()
        for _, kind, payload in changes:
            key, action = self.watched.key(kind, payload), self.watched.actions[kind]
            if action == "MODIFIED" and key not in page and not met_before(key) and key not in self.held:
                unmet.add(key)
            elif action != "MODIFIED":
                page.add(key)
        created = await self.store.created_at(sorted(unmet), self.watched.created) if unmet else {}
        out: list[Sent] = []
        met: set[str] = set()  # keys sent earlier in this page
        for seq, kind, payload in changes:
            key, action = self.watched.key(kind, payload), self.watched.actions[kind]
            if action == "MODIFIED" and key not in met and not met_before(key):
                first = created.get(key)
                if key in self.held or first is None or first > seq:
                    self.held.add(key)
                    continue
            obj = self.watched.at_change(kind, payload) or objects.get(key)
            out.append((key, action, obj, seq))
            met.add(key)
            if action == "ADDED" and key in self.held:
                self.held.discard(key)
                now = objects.get(key)
                if now is not None and now != obj:
                    out.append((key, "MODIFIED", now, seq))
        return out

    async def send(self, response: web.StreamResponse, changes: Iterable[Sent]) -> None:
        for key, action, obj, seq in changes:
            obj = obj if obj is not None else self.last.get(key)
            if key in self.gone_since_start and action == "DELETED":
                self.gone_since_start.discard(key)
                obj = obj or {"apiVersion": self.watched.api_version, "kind": self.watched.kind,
                              "metadata": self.watched.stub(key)}
                if not self.in_scope(obj):
                    continue
                self.selection.seen.add(key)
            if obj is None:
                continue  # created and deleted before this watch ever read it
            if action != "DELETED" and self.watched.gone(obj):
                action = "DELETED"  # its deletion is sent (or comes) once; never as a new object
            kind = self.selection.event(key, action, obj)
            self.last[key] = obj
            if kind is not None:
                await self._write(response, kind, _stamped(obj, seq))

    async def _write(self, response: web.StreamResponse, kind: str, obj: dict[str, Any]) -> None:
        if self.as_table and kind != "BOOKMARK":
            obj = tables.table(self.watched.kind, [obj], resource_version=obj["metadata"]["resourceVersion"],
                               include=self.include)
        await response.write(msgspec.json.encode({"type": kind, "object": obj}) + b"\n")

    def _gone(self) -> bool:
        transport = self.request.transport
        return transport is None or transport.is_closing()
