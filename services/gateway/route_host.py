"""What the kind and subresource routes use of the gateway's core routes (`handlers.Routes`):
the read model, the event store, the writes not yet projected, and reading, validating and
publishing a request's objects."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from aiohttp import web

from shared.events import AnyEvent
from shared.ports import EventStoreReader, ReadModelReader

from . import objects
from .own_writes import OwnWrites


class RouteHost(Protocol):
    queries: ReadModelReader
    store: EventStoreReader
    own_writes: OwnWrites

    async def publish(self, request: web.Request, payloads: Sequence[AnyEvent]) -> None: ...

    async def read_docs(self, request: web.Request, kind: str | None = None) -> list[dict[str, Any]]: ...

    async def validate(self, request: web.Request, docs: list[dict[str, Any]]) -> objects.Validated: ...

    async def objects_of(self, kind: str, ns: str | None = None) -> list[dict[str, Any]]: ...

    async def create_pod(self, request: web.Request) -> web.Response: ...
