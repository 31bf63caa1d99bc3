"""The REST routes. Writes are validated, turned into events and published; reads query Postgres.

The read model is eventually consistent: an object written a moment ago may not be visible (nor
count as a duplicate) until the projector has applied its event.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import msgspec
from aiohttp import web

from shared.errors import AlreadyExists, BerthError, Forbidden, InvalidInput, NotFound, RecordTooLarge
from shared.events import (
    AnyEvent,
    NodeDeleted,
    NodeUpserted,
    OutgoingEvent,
    PodDeleted,
    PodSubmitted,
    TopicRegistry,
    envelope,
    payload_from_builtins,
)
from shared.model import Namespace, ObjectMeta
from shared.model.api_fields import FIELD_VALIDATIONS, FieldValidation
from shared.model.loader import API_GROUPS
from shared.model.namespace import labelled
from shared.ports import AcceptedIntentLog, EventStoreReader, Publisher, ReadModelReader
from shared.projection import PodRow

from . import containers, discovery, object_watches, objects, openapi, tables, versions, watch
from .existence import pod_exists
from .generated_names import name_generated
from .kinds import KindRoutes
from .limits import LimitExceeded, StreamSlots, check_objects
from .listing import BadSelector, Order, Page, by_key, by_time, field_terms, listed, selection
from .metrics import GatewayMetrics
from .own_writes import NotSettled, OwnWrites
from .params import dry_run, read_delete_options
from .patching import UnsupportedPatch
from .pod_events import core_events, pod_events
from .protobuf_body import UnsupportedBody, body_text
from .settings import GatewaySettings
from .subresources import SubresourceRoutes
from .versions import StaleVersion

log = logging.getLogger(__name__)

MUTATING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def status(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> web.Response:
    """A Kubernetes `Status` object as the error body."""
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                            "reason": reason, "message": message, "code": code}
    if details is not None:
        body["details"] = details
    return web.json_response(body, status=code)


def _error_response(exc: BaseException) -> web.Response:
    if isinstance(exc, LimitExceeded):
        if exc.retry_after_s is None:
            return status(exc.code, exc.reason, str(exc))
        refused = status(exc.code, exc.reason, str(exc), {"retryAfterSeconds": exc.retry_after_s})
        refused.headers["Retry-After"] = str(exc.retry_after_s)
        return refused
    if isinstance(exc, UnsupportedPatch | UnsupportedBody):
        return status(415, "UnsupportedMediaType", str(exc))
    if isinstance(exc, RecordTooLarge):  # one object larger than the largest record published
        return status(413, "RequestEntityTooLarge", str(exc))
    if isinstance(exc, BadSelector):
        return status(400, "BadRequest", str(exc), {"field": exc.field})
    if isinstance(exc, InvalidInput):
        # `causes`, `kind` and `name` as the API server words field errors (kubectl prints "The Pod
        # "web" is invalid: <field>: <reason>"); the rest for Berth's CLI.
        causes = [{"reason": "FieldValueInvalid", "message": e.reason, "field": e.field} for e in (exc, *exc.also)]
        return status(422, "Invalid", str(exc), {**_kind_and_name(exc.obj), "object": exc.obj, "field": exc.field,
                                                 "reason": exc.reason, "causes": causes})
    if isinstance(exc, NotFound):
        return status(404, "NotFound", str(exc), {"kind": exc.kind, "name": exc.name})
    if isinstance(exc, containers.NoContainers):
        return status(400, "BadRequest", str(exc), {"kind": "pods", "name": exc.name})
    if isinstance(exc, Forbidden):
        return status(403, "Forbidden", str(exc), {"kind": exc.kind, "name": exc.name})
    if isinstance(exc, AlreadyExists):
        return status(409, "AlreadyExists", str(exc), {"kind": exc.kind, "name": exc.name})
    if isinstance(exc, StaleVersion):
        return status(409, "Conflict", str(exc), {"kind": exc.kind, "name": exc.name})
    if isinstance(exc, NotSettled):
        return status(409, "Conflict", str(exc))
    if isinstance(exc, RecursionError):
        return status(422, "Invalid", "the request body nests too deeply to read")
    if isinstance(exc, BerthError) and exc.retriable:
        return status(503, "ServiceUnavailable", str(exc))
    log.exception("gateway: unexpected error", exc_info=exc)
    # What failed inside stays in the gateway's log: its text may name tables, queries or paths.
    return status(500, "InternalError", "an internal error occurred; the gateway's log has the details")


def _kind_and_name(obj: str) -> dict[str, str]:
    """An invalid object's kind, group and name as a Status names them, from the error's object
    ("Pod team/web", "PriorityClass high"); nothing for a request or a document without them."""
    kind, _, rest = obj.rpartition(": ")[2].partition(" ")
    if kind not in API_GROUPS or not rest or " " in rest:
        return {}
    group, name = API_GROUPS[kind], rest.rpartition("/")[2]
    return {"kind": kind, "name": "" if name == "<unnamed>" else name, **({"group": group} if group else {})}


def _refuse_nul(request: web.Request) -> None:
    """No name, namespace or query value holds a NUL byte (nothing stored can, and PostgreSQL text
    refuses one): such a request is refused before it reaches a query."""
    for key, value in (*request.match_info.items(), *request.query.items()):
        if "\x00" in key or "\x00" in value:
            raise InvalidInput("request", key.replace("\x00", "\\0"), "must not contain a NUL byte")


WARNINGS = web.RequestKey("berth.warnings", list)
"""What validation accepted with a warning, sent back in Warning headers."""
READABLE = web.RequestKey("berth.readable", list)
"""The ids of the events a write published, which it waits to be readable before it answers."""


_Obj = TypeVar("_Obj")


def _changed(results: list[dict[str, str]], kind: str, wanted: Sequence[_Obj], stored: Mapping[Any, _Obj],
             key: Callable[[_Obj], Any]) -> list[_Obj]:
    """The objects of `wanted` that differ from what `stored` (by `key`) holds, each reported in
    `results` as created, configured or unchanged."""
    out: list[_Obj] = []
    for obj in wanted:
        k = key(obj)
        before = stored.get(k)
        action = "created" if before is None else "unchanged" if before == obj else "configured"
        names = {"namespace": k[0], "name": k[1]} if isinstance(k, tuple) else {"name": k}
        results.append({"kind": kind, **names, "action": action})
        if action != "unchanged":
            out.append(obj)
    return out


def _field_validation(request: web.Request) -> FieldValidation:
    """The API server's fieldValidation parameter (Strict when absent, as kubectl sends by default)."""
    given = request.query.get("fieldValidation", "Strict")
    for mode in FIELD_VALIDATIONS:
        if given.lower() == mode.lower():
            return mode
    raise InvalidInput("request", "fieldValidation", f"unsupported value {given!r}: {', '.join(FIELD_VALIDATIONS)}")


def _answer(request: web.Request, kind: str, page: Page, resource_version: int = 0) -> web.Response:
    """A list, as a Table when the client asks for one (kubectl get does), at the event store's
    seq it was read after (its resourceVersion, where a watch resumes)."""
    version = str(resource_version)
    if tables.wants_table(request.headers.get("Accept", "")):
        body = tables.table(kind, page.items, resource_version=version,
                            include=tables.include_object(request.query))
    else:
        body = objects.render_list(kind, page.items, version, discovery.group_version_of(kind))
    if page.continue_token:
        body["metadata"] |= {"continue": page.continue_token, "remainingItemCount": page.remaining}
    return web.json_response(body)


def _watching(request: web.Request) -> bool:
    return request.query.get("watch", "").lower() in ("1", "true")


def _refuse_watch(request: web.Request, resource: str) -> None:
    """Events (derived from each pod's history) and services (Berth holds none) are not watched: a
    watch of them is refused, not answered with a list."""
    if _watching(request):
        raise _not_allowed(request, f"watch is not supported on {resource}")


def _not_allowed(request: web.Request, message: str) -> web.HTTPMethodNotAllowed:
    """A 405 with the API server's Status body, which kubectl prints as the error's message."""
    return web.HTTPMethodNotAllowed(request.method, ["GET"], text=msgspec.json.encode(
        {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "reason": "MethodNotAllowed",
         "message": message, "code": 405}).decode(), content_type="application/json")


async def _refuse_service_write(request: web.Request) -> web.Response:
    raise _not_allowed(request, "Berth holds no services (it schedules pods): services are only listed, and empty")


UID_CHUNK = 5000
"""Keys per query when objects are read by key (a query takes at most 32,767 parameters)."""
_Row = TypeVar("_Row")


async def _by_keys(read: Callable[[Sequence[str]], Awaitable[list[_Row]]], keys: Sequence[str]) -> list[_Row]:
    """`read` of every key, UID_CHUNK keys per query."""
    return [row for i in range(0, len(keys), UID_CHUNK) for row in await read(keys[i:i + UID_CHUNK])]
POD_CHANGES = {"PodSubmitted": "ADDED", "PodNominated": "MODIFIED", "PodBound": "MODIFIED",
               "BindRejected": "MODIFIED", "SchedulingAttempted": "MODIFIED", "PodEvicted": "DELETED",
               "PodDeleted": "DELETED"}
"""The stored events that change what a pod's API object shows."""
NODE_CHANGES = {"NodeUpserted": "ADDED", "NodeDeleted": "DELETED"}


def _pod_key(kind: str, payload: dict[str, Any]) -> str:
    if kind == "PodSubmitted":
        return str(payload["pod"]["metadata"].get("uid", ""))
    return str(payload.get("uid") or payload.get("pod_uid") or "")


def _pod_gone(pod: dict[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") == "Deleted"


def _pod_at_change(kind: str, payload: dict[str, Any]) -> dict[str, Any] | None:
    """A pod as its submission leaves it: Pending, not yet tried."""
    if kind != "PodSubmitted":
        return None
    event = payload_from_builtins(payload, type_name=kind)
    assert isinstance(event, PodSubmitted)
    meta = event.pod.metadata
    return objects.render_pod_row(PodRow(uid=meta.uid, namespace=meta.namespace, name=meta.name, pod=event.pod))


def _node_at_change(kind: str, payload: dict[str, Any]) -> dict[str, Any] | None:
    if kind != "NodeUpserted":
        return None
    event = payload_from_builtins(payload, type_name=kind)
    assert isinstance(event, NodeUpserted)
    return objects.render_node(event.node)


def _node_key(kind: str, payload: dict[str, Any]) -> str:
    return str(payload["node"]["metadata"]["name"] if kind == "NodeUpserted" else payload["node_name"])


def _answer_one(request: web.Request, kind: str, item: dict[str, Any]) -> web.Response:
    if tables.wants_table(request.headers.get("Accept", "")):
        return web.json_response(tables.table(kind, [item],
                                              include=tables.include_object(request.query)))
    return web.json_response(item)


class Routes:
    def __init__(self, settings: GatewaySettings, publisher: Publisher, queries: ReadModelReader,
                 registry: TopicRegistry, metrics: GatewayMetrics, intents: AcceptedIntentLog,
                 store: EventStoreReader, streams: StreamSlots) -> None:
        self.settings, self.publisher, self.queries = settings, publisher, queries
        self.store, self.streams = store, streams
        self.own_writes = OwnWrites(store.holding)
        self.intents = intents
        self.registry, self.metrics = registry, metrics
        self.pod_creations = asyncio.Lock()
        """Held from a create's existence check until its intent is recorded: two creates of one
        pod at once would otherwise both find it absent (the intent is recorded only once the
        broker has the event) and both submit it."""

    def install(self, app: web.Application) -> None:
        app.middlewares.append(self._middleware)
        discovery.install(app)
        openapi.install(app)
        KindRoutes(self).install(app)
        SubresourceRoutes(self, self.settings.scheduler_names).install(app)
        containers.install(app, self.queries)
        r = app.router
        r.add_get("/api/v1/nodes", self.list_nodes)
        r.add_post("/api/v1/nodes", self.create_node)
        r.add_get("/api/v1/nodes/{name}", self.get_node)
        r.add_put("/api/v1/nodes/{name}", self.replace_node)
        r.add_delete("/api/v1/nodes/{name}", self.delete_node)
        r.add_get("/api/v1/pods", self.list_pods)
        r.add_get("/api/v1/namespaces/{ns}/pods", self.list_pods)
        r.add_post("/api/v1/namespaces/{ns}/pods", self.create_pod)
        r.add_get("/api/v1/namespaces/{ns}/pods/{name}", self.get_pod)
        r.add_delete("/api/v1/namespaces/{ns}/pods/{name}", self.delete_pod)
        r.add_post("/apis/berth.dev/v1/apply", self.apply)
        r.add_get("/api/v1/namespaces", self.list_namespaces)
        r.add_get("/apis/scheduling.k8s.io/v1/priorityclasses", self.list_priority_classes)
        r.add_get("/apis/policy/v1/poddisruptionbudgets", self.list_pdbs)
        r.add_get("/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets", self.list_pdbs)
        r.add_get("/api/v1/events", self.list_events)
        r.add_get("/api/v1/namespaces/{ns}/events", self.list_events)
        r.add_get("/api/v1/services", self.list_services)
        r.add_get("/api/v1/namespaces/{ns}/services", self.list_services)
        r.add_get("/api/v1/namespaces/{ns}/services/{name}", self.get_service)
        for method in ("POST", "PUT", "PATCH", "DELETE"):
            r.add_route(method, "/api/v1/namespaces/{ns}/services", _refuse_service_write)
            r.add_route(method, "/api/v1/namespaces/{ns}/services/{name}", _refuse_service_write)

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        started = time.perf_counter()
        route = request.match_info.route.resource.canonical if request.match_info.route.resource else "unmatched"
        response: web.StreamResponse
        try:
            _refuse_nul(request)
            await read_delete_options(request)
            response = await handler(request)
            await self._readable(request, response)
        except web.HTTPException:
            raise
        except Exception as exc:
            response = _error_response(exc)
        for warning in request.get(WARNINGS, ()):
            # The API server's shape, which kubectl prints as "Warning: <text>".
            response.headers.add("Warning", '299 - "' + warning.replace('"', '\\"') + '"')
        self.metrics.requests.labels(request.method, route, str(response.status)).inc()
        self.metrics.seconds.labels(request.method, route).observe(time.perf_counter() - started)
        return response

    async def _readable(self, request: web.Request, response: web.StreamResponse) -> None:
        """A write answers once what it published can be read, as the API server's writes do: a
        GET right after a create, or kubectl applying a PriorityClass and then a pod naming it,
        sees the write. Where the projector does not store it within `readable_within_s`, the
        write answers all the same (it is accepted), with a warning."""
        published = request.get(READABLE, ())
        if not published or response.status >= 400 or self.settings.readable_within_s <= 0:
            return
        try:
            readable = await self.own_writes.readable(published, self.settings.readable_within_s)
        except BerthError as exc:  # the write is accepted: the event store's trouble is not its failure
            log.warning("gateway: could not tell whether a write is readable yet: %s", exc)
            readable = False
        if not readable:
            response.headers.add("Warning", '299 - "accepted; reads may not show it yet: the read model is behind"')

    async def publish(self, request: web.Request, payloads: Sequence[AnyEvent]) -> None:
        """Publish `payloads` for `request`; nothing with `dryRun=All` (kubectl's --dry-run=server).
        The request answers once they can be read (`_readable`)."""
        if dry_run(request):
            return
        # Strictly increasing timestamps: the scheduler orders nodes and pending pods by submission
        # time, so one apply keeps its document order.
        at = datetime.now(UTC)
        out = [OutgoingEvent(self.registry.topic_of(p), envelope(p, producer=self.settings.base.service_name,
                                                                 timestamp=at + timedelta(microseconds=i)))
               for i, p in enumerate(payloads)]
        step = self.settings.publish_batch
        for i in range(0, len(out), step):
            await self.publisher.publish(out[i:i + step])
            # Kept before the reply: a broker that loses its log before the projector stored
            # these gets them again (`shared.adapters.log_restore`).
            await self.intents.record(out[i:i + step])
        for event in out:
            self.own_writes.published(event.envelope.key, event.envelope.event_id)
        request.setdefault(READABLE, []).extend(event.envelope.event_id for event in out)
        self.metrics.published.inc(len(out))

    async def read_docs(self, request: web.Request, kind: str | None = None) -> list[dict[str, Any]]:
        docs = objects.parse_body(body_text(await request.read(), request.content_type), kind=kind)
        check_objects(len(docs), self.settings.max_objects)
        if kind is not None and (len(docs) != 1 or docs[0].get("kind") != kind):
            raise InvalidInput("request body", "kind", f"expected exactly one {kind}")
        return docs

    async def validate(self, request: web.Request, docs: list[dict[str, Any]]) -> objects.Validated:
        needs_classes = any(d.get("kind") == "Pod" for d in docs)
        stored = [r.priority_class for r in await self.queries.priority_classes()] if needs_classes else []
        validated = objects.validate(docs, stored, field_validation=_field_validation(request),
                                     created=await self._created(docs))
        request[WARNINGS] = validated.warnings
        return validated

    async def answer(self, request: web.Request, kind: str, items: list[dict[str, Any]], resource_version: int = 0,
                     found: versions.Versions | None = None, order: Order = by_key) -> web.Response:
        """`items` narrowed to the page the request asks for (`listing.listed`), each object with its
        own resourceVersion from `found` (versions.py)."""
        page = listed(request, kind, items, order)
        stamped = await versions.stamped(self.store, kind, page.items, found or {})
        return _answer(request, kind, Page(stamped, page.continue_token, page.remaining), resource_version)

    async def answer_one(self, request: web.Request, kind: str, item: dict[str, Any],
                         found: versions.Versions | None = None) -> web.Response:
        [stamped] = await versions.stamped(self.store, kind, [item], found or {})
        return _answer_one(request, kind, stamped)

    async def _created(self, docs: list[dict[str, Any]]) -> objects.Created:
        """The stored objects' creation times, for the kinds a request holds (its nodes read by name:
        a patch of one node, or an apply of a few, reads those, not every node)."""
        kinds = {str(d.get("kind")) for d in docs}
        out: dict[tuple[str, str, str], str] = {}
        stored: list[tuple[str, Any]] = []
        if "Node" in kinds:
            names = sorted({str((d.get("metadata") or {}).get("name", "")) for d in docs if d.get("kind") == "Node"})
            stored += [("Node", r.node) for r in await _by_keys(self.queries.nodes_by_name, names)]
        if "Namespace" in kinds:
            stored += [("Namespace", r.namespace) for r in await self.queries.namespaces()]
        if "PriorityClass" in kinds:
            stored += [("PriorityClass", r.priority_class) for r in await self.queries.priority_classes()]
        if "PodDisruptionBudget" in kinds:
            stored += [("PodDisruptionBudget", r.pdb) for r in await self.queries.pdbs()]
        for kind, obj in stored:
            if obj.metadata.creation_timestamp:
                out[(kind, obj.metadata.namespace or "", obj.metadata.name)] = obj.metadata.creation_timestamp
        return out

    # --- nodes --------------------------------------------------------------------------------

    async def list_nodes(self, request: web.Request) -> web.StreamResponse:
        if _watching(request):
            return await self._watch(request, watch.Watched("Node", "v1", NODE_CHANGES, _node_key,
                                                            self._nodes_named, self._all_nodes,
                                                            lambda name: {"name": name},
                                                            at_change=_node_at_change))
        version = await self.store.last_seq()
        found = await versions.read(self.store, "Node")
        rows = await self.queries.nodes()
        return await self.answer(request, "Node", [objects.render_node_row(r) for r in rows],
                                 version, found)

    async def _all_nodes(self) -> dict[str, dict[str, Any]]:
        return {r.name: objects.render_node_row(r) for r in await self.queries.nodes()}

    async def _nodes_named(self, names: Sequence[str]) -> dict[str, dict[str, Any]]:
        return {r.name: objects.render_node_row(r) for r in await _by_keys(self.queries.nodes_by_name, names)}

    async def _watch(self, request: web.Request, watched: watch.Watched) -> web.StreamResponse:
        """A watch of `watched`, narrowed by the request's selectors and, on a namespaced URL, to its
        namespace: the one place a change is judged in or out of the stream."""
        selected, ns = selection(request, watched.kind), request.match_info.get("ns")

        def in_scope(item: dict[str, Any]) -> bool:
            return ns is None or (item.get("metadata") or {}).get("namespace") == ns

        stream = watch.WatchStream(request, watched, self.store, lambda item: in_scope(item) and selected(item),
                                   in_scope)
        with self.streams.slot(request.remote or ""):
            return await stream.serve()

    async def get_node(self, request: web.Request) -> web.Response:
        found = await versions.read(self.store, "Node", [("", request.match_info["name"])])
        row = await self.queries.node(request.match_info["name"])
        if row is None:
            raise NotFound("nodes", request.match_info["name"])
        return await self.answer_one(request, "Node", objects.render_node_row(row), found)

    async def create_node(self, request: web.Request) -> web.Response:
        docs = await self.read_docs(request, "Node")
        if isinstance(docs[0].get("metadata"), dict):
            name_generated(docs[0]["metadata"])
        v = await self.validate(request, docs)
        node = v.nodes[0]
        # As for every kind (`KindRoutes.create`): a second create of the name is refused even
        # before the first is in the read model.
        async with self.own_writes.settled(node.metadata.name):
            if await self.queries.node(node.metadata.name) is not None:
                raise AlreadyExists("nodes", node.metadata.name)
            await self.publish(request, objects.events_of(v))
        return web.json_response(objects.render_node(node), status=201)

    async def replace_node(self, request: web.Request) -> web.Response:
        async with self.own_writes.settled(request.match_info["name"]):
            return await self._replace_node(request)

    async def _replace_node(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        docs = await self.read_docs(request, "Node")
        v = await self.validate(request, [dict(d) for d in docs])
        node = v.nodes[0]
        if node.metadata.name != name:
            raise InvalidInput(f"Node {node.metadata.name}", "metadata.name",
                               f"the name of the object ({node.metadata.name}) "
                               f"does not match the name on the URL ({name})")
        found = await versions.read(self.store, "Node", [("", name)])
        row = await self.queries.node(name)
        if row is None:
            raise NotFound("nodes", name)
        [live] = await versions.stamped(self.store, "Node", [objects.render_node_row(row)], found)
        versions.check("Node", live, docs[0])
        await self.publish(request, objects.events_of(v))
        return web.json_response(objects.render_node(node))

    async def delete_node(self, request: web.Request) -> web.Response:
        row = await self.queries.node(request.match_info["name"])
        if row is None:
            raise NotFound("nodes", request.match_info["name"])
        await self.publish(request, [NodeDeleted(node_name=row.name)])
        return web.json_response(objects.render_node_row(row))

    # --- pods ---------------------------------------------------------------------------------

    async def list_pods(self, request: web.Request) -> web.StreamResponse:
        ns = request.match_info.get("ns")
        if _watching(request):
            return await self._watch(request, watch.Watched("Pod", "v1", POD_CHANGES, _pod_key,
                                                            self._pods_of, lambda: self._live_pods(ns),
                                                            lambda uid: {"uid": uid}, _pod_gone, _pod_at_change))
        version = await self.store.last_seq()
        rows = await self.queries.pods(ns)
        return await self.answer(request, "Pod", [objects.render_pod_row(r) for r in rows], version)

    async def _pods_of(self, uids: Sequence[str]) -> dict[str, dict[str, Any]]:
        rows = await _by_keys(self.queries.pods_by_uid, uids)
        return {r.uid: objects.render_pod_row(r) for r in rows if r.name}

    async def _live_pods(self, ns: str | None) -> dict[str, dict[str, Any]]:
        return {r.uid: objects.render_pod_row(r) for r in await self.queries.pods(ns)}

    async def list_namespaces(self, request: web.Request) -> web.StreamResponse:
        if _watching(request):
            return await self._watch(request, object_watches.upserted_kind("Namespace", self._namespaces))
        version, found = await self.store.last_seq(), await versions.read(self.store, "Namespace")
        return await self.answer(request, "Namespace", await self._namespaces(), version, found)

    async def _namespaces(self) -> list[dict[str, Any]]:
        """The namespaces applied, and those in use without a Namespace object (default, and every
        namespace a live pod or budget names), labelled with their names as the API server does."""
        declared = {r.name: r.namespace for r in await self.queries.namespaces()}
        # The pods' states, not their rows: every spec of the cluster is not needed to name namespaces.
        used = ({"default"} | {p.namespace for p in await self.queries.pod_states() if not p.deleted}
                | {b.namespace for b in await self.queries.pdbs()})
        items = []
        for name in sorted(declared.keys() | used):
            ns = declared.get(name) or labelled(Namespace(metadata=ObjectMeta(name=name)))
            items.append(objects.render_object(ns, "v1", "Namespace"))
        return items

    async def list_priority_classes(self, request: web.Request) -> web.StreamResponse:
        if _watching(request):
            return await self._watch(request, object_watches.upserted_kind("PriorityClass", self._priority_classes))
        version, found = await self.store.last_seq(), await versions.read(self.store, "PriorityClass")
        return await self.answer(request, "PriorityClass", await self._priority_classes(),
                                 version, found)

    async def _priority_classes(self) -> list[dict[str, Any]]:
        return [objects.render_object(r.priority_class, "scheduling.k8s.io/v1", "PriorityClass")
                for r in await self.queries.priority_classes()]

    async def list_pdbs(self, request: web.Request) -> web.StreamResponse:
        ns = request.match_info.get("ns")
        if _watching(request):
            return await self._watch(request, object_watches.upserted_kind("PodDisruptionBudget",
                                                                                  lambda: self._pdbs(ns)))
        version, found = await self.store.last_seq(), await versions.read(self.store, "PodDisruptionBudget")
        return await self.answer(request, "PodDisruptionBudget", await self._pdbs(ns), version,
                                 found)

    async def objects_of(self, kind: str, ns: str | None = None) -> list[dict[str, Any]]:
        """Every namespace, PriorityClass or budget (of namespace `ns`) as the API shows them."""
        if kind == "Namespace":
            return await self._namespaces()
        if kind == "PriorityClass":
            return await self._priority_classes()
        return await self._pdbs(ns)

    async def _pdbs(self, ns: str | None = None) -> list[dict[str, Any]]:
        return [objects.render_object(r.pdb, "policy/v1", "PodDisruptionBudget") for r in await self.queries.pdbs(ns)]

    async def get_pod(self, request: web.Request) -> web.Response:
        ns, name = request.match_info["ns"], request.match_info["name"]
        row = await self.queries.pod(ns, name)
        # A deleted pod is gone, as from the API server; `berth describe` still reads its history.
        if row is None or (row.deleted and request.query.get("includeDeleted") != "true"):
            raise NotFound("pods", name)
        data = objects.render_pod_row(row)
        if request.query.get("events") in ("1", "true"):
            data["schedulingEvents"] = pod_events(row, await self.queries.attempts(row.uid),
                                                  await self.queries.bindings(row.uid))
        return await self.answer_one(request, "Pod", data)

    async def list_events(self, request: web.Request) -> web.Response:
        """Core v1 events about pods, from their scheduling history (pod_events). A selector on
        one pod (`kubectl describe pod` sends its uid and name) reads that pod's history alone."""
        _refuse_watch(request, "events")
        selection(request, "Event")  # a bad selector is refused before any pod's history is read
        ns = request.match_info.get("ns")
        wanted = {path: value for path, value, negate in field_terms(request, "Event") if not negate}
        if wanted.get("involvedObject.kind", "Pod") != "Pod":
            # Only pods have scheduling events (`kubectl describe node` asks about its node).
            return await self.answer(request, "Event", [], order=by_time)
        name, uid = wanted.get("involvedObject.name"), wanted.get("involvedObject.uid")
        if name and (ns or wanted.get("involvedObject.namespace")):
            row = await self.queries.pod(ns or wanted["involvedObject.namespace"], name)
            rows = [row] if row is not None else []
        else:
            rows = await self.queries.pods(ns)
        items: list[dict[str, Any]] = []
        for row in rows:
            if uid and row.uid != uid:
                continue
            history = pod_events(row, await self.queries.attempts(row.uid), await self.queries.bindings(row.uid))
            items += core_events(row, history)
        return await self.answer(request, "Event", items, order=by_time)

    async def list_services(self, request: web.Request) -> web.Response:
        """Always empty (`discovery.EMPTY`); a watch is refused as for events."""
        _refuse_watch(request, "services")
        return await self.answer(request, "Service", [])

    async def get_service(self, request: web.Request) -> web.Response:
        raise NotFound("services", request.match_info["name"])

    async def create_pod(self, request: web.Request) -> web.Response:
        ns = request.match_info["ns"]
        docs = await self.read_docs(request, "Pod")
        meta = docs[0].setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise InvalidInput("Pod", "metadata", "expected an object")
        named = request.match_info.get("name")  # a server-side apply's URL names the pod it creates
        if named is None:
            name_generated(meta)
        elif meta.setdefault("name", named) != named:
            raise InvalidInput(f"Pod {meta.get('name')}", "metadata.name", f"the name of the object "
                               f"({meta.get('name')}) does not match the name on the URL ({named})")
        if meta.get("namespace", ns) != ns:
            raise InvalidInput(f"Pod {meta.get('namespace')}/{meta.get('name')}", "metadata.namespace",
                               f"the namespace of the object ({meta.get('namespace')}) "
                               f"does not match the namespace on the URL ({ns})")
        meta["namespace"] = ns
        v = await self.validate(request, docs)
        pod = v.pods[0]
        async with self.pod_creations:
            if await pod_exists(self.queries, self.intents, ns, pod.metadata.name):
                raise AlreadyExists("pods", pod.metadata.name)
            await self.publish(request, objects.events_of(v))
        return web.json_response(objects.render_pod(pod), status=201)

    async def delete_pod(self, request: web.Request) -> web.Response:
        ns, name = request.match_info["ns"], request.match_info["name"]
        row = await self.queries.pod(ns, name)
        if row is None or row.deleted:
            raise NotFound("pods", name)
        await self.publish(request, [PodDeleted(uid=row.uid, namespace=ns, name=name)])
        return web.json_response(objects.render_pod_row(row))

    # --- apply --------------------------------------------------------------------------------

    async def apply(self, request: web.Request) -> web.Response:
        """Validate every object of the body first, publish only when all are valid.

        Nodes, PriorityClasses and budgets are upserted; a pod whose namespace/name is already live
        is left unchanged (pods are immutable once submitted). With `dryRun=All` (kubectl's
        `--dry-run=server`) nothing is published: the answer says what would be done.
        """
        dry = dry_run(request)
        v = await self.validate(request, await self.read_docs(request))
        creates_pods = bool(v.pods) and not dry
        async with self.pod_creations if creates_pods else contextlib.nullcontext():
            results, events = await self._apply_validated(request, v, dry)
        counts: dict[str, int] = {}
        for r in results:
            counts[r["action"]] = counts.get(r["action"], 0) + 1
        body = {"apiVersion": "berth.dev/v1", "kind": "ApplyResult", "published": len(events), "counts": counts,
                "items": results, "dryRun": dry}
        return web.Response(body=msgspec.json.encode(body), content_type="application/json")

    async def _apply_validated(self, request: web.Request, v: objects.Validated,
                               dry: bool) -> tuple[list[dict[str, str]], list[AnyEvent]]:
        """What applying `v` does to each object, and the events published (none when `dry`)."""
        # Accepted and not in the read model yet; read before it, as `pod_exists` says why.
        pending = await self.intents.pending_pods() if v.pods else set()
        rows = {(p.namespace, p.name): p for p in await self.queries.pods()} if v.pods else {}
        live = set(rows) | pending
        for p in v.pods:
            stored = rows.get((p.metadata.namespace, p.metadata.name))
            if stored is not None and stored.pod is not None:
                request.setdefault(WARNINGS, []).extend(objects.pod_update_problems(stored.pod, p))
        results: list[dict[str, str]] = []
        fresh = [p for p in v.pods if (p.metadata.namespace, p.metadata.name) not in live]
        for p in v.pods:
            action = "created" if (p.metadata.namespace, p.metadata.name) not in live else "unchanged"
            results.append({"kind": "Pod", "namespace": p.metadata.namespace, "name": p.metadata.name,
                            "action": action})
        # An object the read model holds as it is asked for is left alone ("unchanged"), as kubectl
        # apply sends nothing for it: publishing it again would tell the scheduler the cluster
        # changed, and its pending pods would all be tried again.
        stored_nodes = {r.name: r.node for r in await self.queries.nodes()} if v.nodes else {}
        nodes = _changed(results, "Node", v.nodes, stored_nodes, lambda n: n.metadata.name)
        stored_namespaces = {r.name: r.namespace for r in await self.queries.namespaces()} if v.namespaces else {}
        namespaces = _changed(results, "Namespace", v.namespaces, stored_namespaces, lambda ns: ns.metadata.name)
        stored_classes = ({r.name: r.priority_class for r in await self.queries.priority_classes()}
                          if v.priority_classes else {})
        classes = _changed(results, "PriorityClass", v.priority_classes, stored_classes, lambda pc: pc.metadata.name)
        stored_pdbs = {(r.namespace, r.name): r.pdb for r in await self.queries.pdbs()} if v.pdbs else {}
        pdbs = _changed(results, "PodDisruptionBudget", v.pdbs, stored_pdbs,
                        lambda b: (b.metadata.namespace, b.metadata.name))
        events = objects.events_of(objects.Validated(nodes, fresh, classes, pdbs, namespaces))
        if dry:
            events = []
        else:
            await self.publish(request, events)
        return results, events
