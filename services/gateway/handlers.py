"""The REST routes. Writes are validated, turned into events and published; reads query Postgres.

The read model is eventually consistent: an object written a moment ago may not be visible (nor
count as a duplicate) until the projector has applied its event.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
from aiohttp import web

from shared.adapters.postgres import AcceptedIntents, ReadModelQueries
from shared.errors import AlreadyExists, BerthError, InvalidInput, NotFound
from shared.events import AnyEvent, NodeDeleted, OutgoingEvent, PodDeleted, TopicRegistry, envelope
from shared.model import Namespace, ObjectMeta
from shared.model.api_fields import FIELD_VALIDATIONS, FieldValidation
from shared.model.loader import decode_text
from shared.model.namespace import labelled
from shared.model.selectors import parse_selector
from shared.ports import Publisher

from . import objects
from .metrics import GatewayMetrics
from .pod_events import pod_events
from .settings import GatewaySettings

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
    if isinstance(exc, InvalidInput):
        return status(422, "Invalid", str(exc), {"object": exc.obj, "field": exc.field, "reason": exc.reason})
    if isinstance(exc, NotFound):
        return status(404, "NotFound", str(exc), {"kind": exc.kind, "name": exc.name})
    if isinstance(exc, AlreadyExists):
        return status(409, "AlreadyExists", str(exc), {"kind": exc.kind, "name": exc.name})
    if isinstance(exc, BerthError) and exc.retriable:
        return status(503, "ServiceUnavailable", str(exc))
    log.exception("gateway: unexpected error", exc_info=exc)
    # What failed inside stays in the gateway's log: its text may name tables, queries or paths.
    return status(500, "InternalError", "an internal error occurred; the gateway's log has the details")


def _refuse_nul(request: web.Request) -> None:
    """No name, namespace or query value holds a NUL byte (nothing stored can, and PostgreSQL text
    refuses one): such a request is refused before it reaches a query."""
    for key, value in (*request.match_info.items(), *request.query.items()):
        if "\x00" in key or "\x00" in value:
            raise InvalidInput("request", key.replace("\x00", "\\0"), "must not contain a NUL byte")


WARNINGS = web.RequestKey("berth.warnings", list)
"""What validation accepted with a warning, sent back in Warning headers."""


def _field_validation(request: web.Request) -> FieldValidation:
    """The API server's fieldValidation parameter (Strict when absent, as kubectl sends by default)."""
    given = request.query.get("fieldValidation", "Strict")
    for mode in FIELD_VALIDATIONS:
        if given.lower() == mode.lower():
            return mode
    raise InvalidInput("request", "fieldValidation", f"unsupported value {given!r}: {', '.join(FIELD_VALIDATIONS)}")


def _listed(request: web.Request, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A list narrowed as the API server narrows one: `labelSelector` (kubectl's -l syntax),
    `fieldSelector` (spec.nodeName=n1 and the like) and `limit` (the first that many)."""
    text = request.query.get("labelSelector", "")
    if text:
        try:
            selector = parse_selector(text)
        except ValueError as exc:
            raise InvalidInput("request", "labelSelector", str(exc)) from None
        items = [i for i in items if selector.matches(i.get("metadata", {}).get("labels") or {})]
    fields = request.query.get("fieldSelector", "")
    if fields:
        items = [i for i in items if _fields_match(fields, i)]
    limit = request.query.get("limit", "")
    if limit:
        if not limit.isdigit():
            raise InvalidInput("request", "limit", f"must be a non-negative integer, got {limit!r}")
        items = items[:int(limit)] if int(limit) else items
    return items


FIELD_PATHS = ("metadata.name", "metadata.namespace", "spec.nodeName", "status.phase")
"""The fields a fieldSelector may name (the ones the API server indexes for pods)."""


def _fields_match(text: str, item: dict[str, Any]) -> bool:
    """The API server's fieldSelector: `path=value` or `path!=value`, comma-separated."""
    for part in (p.strip() for p in text.split(",") if p.strip()):
        negate = "!=" in part
        path, _, value = part.partition("!=" if negate else "=")
        path, value = path.strip(), value.strip().lstrip("=")
        if path not in FIELD_PATHS:
            raise InvalidInput("request", "fieldSelector",
                               f"field label not supported: {path} ({', '.join(FIELD_PATHS)})")
        section, _, key = path.partition(".")
        actual = str((item.get(section) or {}).get(key) or "")
        if (actual == value) == negate:
            return False
    return True


class Routes:
    def __init__(self, settings: GatewaySettings, publisher: Publisher, queries: ReadModelQueries,
                 registry: TopicRegistry, metrics: GatewayMetrics, intents: AcceptedIntents) -> None:
        self.settings, self.publisher, self.queries = settings, publisher, queries
        self.intents = intents
        self.registry, self.metrics = registry, metrics

    def install(self, app: web.Application) -> None:
        app.middlewares.append(self._middleware)
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

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        started = time.perf_counter()
        route = request.match_info.route.resource.canonical if request.match_info.route.resource else "unmatched"
        response: web.StreamResponse
        try:
            _refuse_nul(request)
            response = await handler(request)
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

    async def _publish(self, payloads: Sequence[AnyEvent]) -> None:
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
        self.metrics.published.inc(len(out))

    async def _docs(self, request: web.Request, kind: str | None = None) -> list[dict[str, Any]]:
        docs = objects.parse_body(decode_text(await request.read(), "request body"))
        if kind is not None and (len(docs) != 1 or docs[0].get("kind") != kind):
            raise InvalidInput("request body", "kind", f"expected exactly one {kind}")
        return docs

    async def _validate(self, request: web.Request, docs: list[dict[str, Any]]) -> objects.Validated:
        needs_classes = any(d.get("kind") == "Pod" for d in docs)
        stored = [r.priority_class for r in await self.queries.priority_classes()] if needs_classes else []
        validated = objects.validate(docs, stored, field_validation=_field_validation(request))
        request[WARNINGS] = validated.warnings
        return validated

    # --- nodes --------------------------------------------------------------------------------

    async def list_nodes(self, request: web.Request) -> web.Response:
        rows = await self.queries.nodes()
        items = _listed(request, [objects.render_node_row(r) for r in rows])
        return web.json_response(objects.render_list("Node", items))

    async def get_node(self, request: web.Request) -> web.Response:
        row = await self.queries.node(request.match_info["name"])
        if row is None:
            raise NotFound("nodes", request.match_info["name"])
        return web.json_response(objects.render_node_row(row))

    async def create_node(self, request: web.Request) -> web.Response:
        v = await self._validate(request, await self._docs(request, "Node"))
        node = v.nodes[0]
        if await self.queries.node(node.metadata.name) is not None:
            raise AlreadyExists("nodes", node.metadata.name)
        await self._publish(objects.events_of(v))
        return web.json_response(objects.render_node(node), status=201)

    async def replace_node(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        v = await self._validate(request, await self._docs(request, "Node"))
        node = v.nodes[0]
        if node.metadata.name != name:
            raise InvalidInput(f"Node {node.metadata.name}", "metadata.name",
                               f"the name of the object ({node.metadata.name}) "
                               f"does not match the name on the URL ({name})")
        if await self.queries.node(name) is None:
            raise NotFound("nodes", name)
        await self._publish(objects.events_of(v))
        return web.json_response(objects.render_node(node))

    async def delete_node(self, request: web.Request) -> web.Response:
        row = await self.queries.node(request.match_info["name"])
        if row is None:
            raise NotFound("nodes", request.match_info["name"])
        await self._publish([NodeDeleted(node_name=row.name)])
        return web.json_response(objects.render_node_row(row))

    # --- pods ---------------------------------------------------------------------------------

    async def list_pods(self, request: web.Request) -> web.Response:
        rows = await self.queries.pods(request.match_info.get("ns"))
        items = _listed(request, [objects.render_pod_row(r) for r in rows])
        return web.json_response(objects.render_list("Pod", items))

    async def list_namespaces(self, request: web.Request) -> web.Response:
        """The namespaces applied, and those in use without a Namespace object (default, and every
        namespace a live pod or budget names), labelled with their names as the API server does."""
        declared = {r.name: r.namespace for r in await self.queries.namespaces()}
        # The pods' states, not their rows: every spec of the cluster is not needed to name namespaces.
        used = ({"default"} | {p.namespace for p in await self.queries.pod_states() if not p.deleted}
                | {b.namespace for b in await self.queries.pdbs()})
        items = []
        for name in sorted(declared.keys() | used):
            ns = declared.get(name) or labelled(Namespace(metadata=ObjectMeta(name=name)))
            items.append({**objects.render_object(ns, "v1", "Namespace"), "status": {"phase": "Active"}})
        return web.json_response(objects.render_list("Namespace", _listed(request, items)))

    async def list_priority_classes(self, request: web.Request) -> web.Response:
        items = [objects.render_object(r.priority_class, "scheduling.k8s.io/v1", "PriorityClass")
                 for r in await self.queries.priority_classes()]
        return web.json_response(objects.render_list("PriorityClass", _listed(request, items)))

    async def list_pdbs(self, request: web.Request) -> web.Response:
        items = [objects.render_object(r.pdb, "policy/v1", "PodDisruptionBudget")
                 for r in await self.queries.pdbs(request.match_info.get("ns"))]
        return web.json_response(objects.render_list("PodDisruptionBudget", _listed(request, items)))

    async def get_pod(self, request: web.Request) -> web.Response:
        ns, name = request.match_info["ns"], request.match_info["name"]
        row = await self.queries.pod(ns, name)
        if row is None:
            raise NotFound("pods", name)
        data = objects.render_pod_row(row)
        if request.query.get("events") in ("1", "true"):
            data["schedulingEvents"] = pod_events(row, await self.queries.attempts(row.uid),
                                                  await self.queries.bindings(row.uid))
        return web.json_response(data)

    async def create_pod(self, request: web.Request) -> web.Response:
        ns = request.match_info["ns"]
        docs = await self._docs(request, "Pod")
        meta = docs[0].setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise InvalidInput("Pod", "metadata", "expected an object")
        if meta.get("namespace", ns) != ns:
            raise InvalidInput(f"Pod {meta.get('namespace')}/{meta.get('name')}", "metadata.namespace",
                               f"the namespace of the object ({meta.get('namespace')}) "
                               f"does not match the namespace on the URL ({ns})")
        meta["namespace"] = ns
        v = await self._validate(request, docs)
        pod = v.pods[0]
        existing = await self.queries.pod(ns, pod.metadata.name)
        if existing is not None and not existing.deleted:
            raise AlreadyExists("pods", pod.metadata.name)
        await self._publish(objects.events_of(v))
        return web.json_response(objects.render_pod(pod), status=201)

    async def delete_pod(self, request: web.Request) -> web.Response:
        ns, name = request.match_info["ns"], request.match_info["name"]
        row = await self.queries.pod(ns, name)
        if row is None or row.deleted:
            raise NotFound("pods", name)
        await self._publish([PodDeleted(uid=row.uid, namespace=ns, name=name)])
        return web.json_response(objects.render_pod_row(row))

    # --- apply --------------------------------------------------------------------------------

    async def apply(self, request: web.Request) -> web.Response:
        """Validate every object of the body first, publish only when all are valid.

        Nodes, PriorityClasses and budgets are upserted; a pod whose namespace/name is already live
        is left unchanged (pods are immutable once submitted). With `dryRun=All` (kubectl's
        `--dry-run=server`) nothing is published: the answer says what would be done.
        """
        dry_run = request.query.get("dryRun", "")
        if dry_run not in ("", "All"):
            raise InvalidInput("request", "dryRun", f"unsupported value {dry_run!r}: All")
        v = await self._validate(request, await self._docs(request))
        rows = {(p.namespace, p.name): p for p in await self.queries.pods()} if v.pods else {}
        live = set(rows)
        if v.pods:
            live |= await self.intents.pending_pods()  # accepted, not yet in the read model
        for p in v.pods:
            stored = rows.get((p.metadata.namespace, p.metadata.name))
            if stored is not None and stored.pod is not None:
                request.setdefault(WARNINGS, []).extend(objects.pod_update_problems(stored.pod, p))
        known_nodes = {n.name for n in await self.queries.nodes()} if v.nodes else set()
        results: list[dict[str, str]] = []
        fresh = [p for p in v.pods if (p.metadata.namespace, p.metadata.name) not in live]
        for p in v.pods:
            action = "created" if (p.metadata.namespace, p.metadata.name) not in live else "unchanged"
            results.append({"kind": "Pod", "namespace": p.metadata.namespace, "name": p.metadata.name,
                            "action": action})
        for n in v.nodes:
            results.append({"kind": "Node", "name": n.metadata.name,
                            "action": "configured" if n.metadata.name in known_nodes else "created"})
        known_namespaces = {r.name for r in await self.queries.namespaces()} if v.namespaces else set()
        results += [{"kind": "Namespace", "name": ns.metadata.name,
                     "action": "configured" if ns.metadata.name in known_namespaces else "created"}
                    for ns in v.namespaces]
        results += [{"kind": "PriorityClass", "name": pc.metadata.name, "action": "configured"}
                    for pc in v.priority_classes]
        results += [{"kind": "PodDisruptionBudget", "namespace": b.metadata.namespace, "name": b.metadata.name,
                     "action": "configured"} for b in v.pdbs]
        events = objects.events_of(objects.Validated(v.nodes, fresh, v.priority_classes, v.pdbs, v.namespaces))
        if dry_run:
            events = []
        else:
            await self._publish(events)
        counts: dict[str, int] = {}
        for r in results:
            counts[r["action"]] = counts.get(r["action"], 0) + 1
        body = {"apiVersion": "berth.dev/v1", "kind": "ApplyResult", "published": len(events), "counts": counts,
                "items": results, "dryRun": bool(dry_run)}
        return web.Response(body=msgspec.json.encode(body), content_type="application/json")
