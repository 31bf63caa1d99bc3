"""Get, create, patch and delete of single objects, as kubectl drives them (`kubectl apply` reads the
object, creates it when missing, patches it when not).

Nodes, namespaces, PriorityClasses and PodDisruptionBudgets are upserted by their events, so any
valid patch of them is published. A pod's spec and metadata are fixed once it is submitted (Berth's
pods are immutable): a patch that leaves the pod as it is answers it unchanged, any other is refused
with the field it would change.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from shared.errors import AlreadyExists, Forbidden, InvalidInput, NotFound
from shared.events import (
    AnyEvent,
    NamespaceDeleted,
    NodeDeleted,
    PodDeleted,
    PodDisruptionBudgetDeleted,
    PriorityClassDeleted,
)
from shared.projection import PodRow

from . import objects, versions
from .generated_names import name_generated
from .patching import APPLY, apply_patch
from .protobuf_body import body_text
from .route_host import RouteHost

SERVER_FIELDS = ("resourceVersion", "creationTimestamp", "uid", "managedFields", "generation")
"""Metadata the server writes: a patch that carries them back does not change the object."""
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


@dataclass(frozen=True, slots=True)
class Kind:
    kind: str
    api_version: str
    resource: str
    namespaced: bool
    deleted: Callable[[str, str], AnyEvent]


UNDELETABLE_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})
"""The API server refuses to delete these (403)."""

KINDS = {
    "Node": Kind("Node", "v1", "nodes", False, lambda ns, name: NodeDeleted(node_name=name)),
    "Namespace": Kind("Namespace", "v1", "namespaces", False, lambda ns, name: NamespaceDeleted(name=name)),
    "PriorityClass": Kind("PriorityClass", "scheduling.k8s.io/v1", "priorityclasses", False,
                          lambda ns, name: PriorityClassDeleted(name=name)),
    "PodDisruptionBudget": Kind("PodDisruptionBudget", "policy/v1", "poddisruptionbudgets", True,
                                lambda ns, name: PodDisruptionBudgetDeleted(namespace=ns, name=name)),
}


def _without_server_fields(doc: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in (doc.get("metadata") or {}).items() if k not in SERVER_FIELDS}
    return {**doc, "metadata": meta}


class KindRoutes:
    def __init__(self, routes: RouteHost) -> None:
        self.routes = routes
        self.queries = routes.queries

    def install(self, app: web.Application) -> None:
        r = app.router
        r.add_patch("/api/v1/nodes/{name}", self.handler("Node", self.patch))
        r.add_post("/api/v1/namespaces", self.handler("Namespace", self.create))
        for verb, method in (("GET", self.get), ("PUT", self.replace), ("PATCH", self.patch), ("DELETE", self.delete)):
            r.add_route(verb, "/api/v1/namespaces/{name}", self.handler("Namespace", method))
            r.add_route(verb, "/apis/scheduling.k8s.io/v1/priorityclasses/{name}",
                        self.handler("PriorityClass", method))
            r.add_route(verb, "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets/{name}",
                        self.handler("PodDisruptionBudget", method))
        r.add_post("/apis/scheduling.k8s.io/v1/priorityclasses", self.handler("PriorityClass", self.create))
        r.add_post("/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets",
                   self.handler("PodDisruptionBudget", self.create))
        r.add_patch("/api/v1/namespaces/{ns}/pods/{name}", self.patch_pod)
        r.add_put("/api/v1/namespaces/{ns}/pods/{name}", self.replace_pod)

    def handler(self, kind: str, method: Callable[[web.Request, Kind], Awaitable[web.Response]]
                ) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def handle(request: web.Request) -> web.Response:
            return await method(request, KINDS[kind])

        return handle

    async def stored(self, kind: Kind, ns: str, name: str) -> dict[str, Any] | None:
        if kind.kind == "Node":
            row = await self.queries.node(name)
            return objects.render_node_row(row) if row is not None else None
        listed = await self.routes.objects_of(kind.kind, ns if kind.namespaced else None)
        return next((i for i in listed if (i.get("metadata") or {}).get("name") == name), None)

    async def _existing(self, request: web.Request, kind: Kind) -> tuple[str, str, dict[str, Any]]:
        ns, name = request.match_info.get("ns", ""), request.match_info["name"]
        known = await versions.read(self.routes.store, kind.kind, [(ns, name)])
        found = await self.stored(kind, ns, name)
        if found is None:
            raise NotFound(kind.resource, name)
        [stamped] = await versions.stamped(self.routes.store, kind.kind, [found], known)
        return ns, name, stamped

    async def get(self, request: web.Request, kind: Kind) -> web.Response:
        _, _, found = await self._existing(request, kind)
        return web.json_response(found)

    async def create(self, request: web.Request, kind: Kind) -> web.Response:
        docs = await self._body(request, kind)
        meta = docs[0]["metadata"]
        name_generated(meta)
        ns, name = str(meta.get("namespace", "")), str(meta.get("name", ""))
        # Once this gateway's last write of the object is stored: a create right after another of
        # the same name (the read model not there yet) is refused, not published over it.
        async with self.routes.own_writes.settled(versions.event_key(kind.kind, ns, name)):
            return await self._create(request, kind, docs)

    async def _create(self, request: web.Request, kind: Kind, docs: list[dict[str, Any]]) -> web.Response:
        """`create`, the object's key held already."""
        meta = docs[0]["metadata"]
        ns, name = str(meta.get("namespace", "")), str(meta.get("name", ""))
        if await self.stored(kind, ns, name) is not None:
            raise AlreadyExists(kind.resource, name)
        return await self._publish(request, kind, docs, status=201)

    async def _body(self, request: web.Request, kind: Kind) -> list[dict[str, Any]]:
        """The one object a create or replace sends, named as its URL names it."""
        docs = await self.routes.read_docs(request, kind.kind)
        meta = docs[0].setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise InvalidInput(kind.kind, "metadata", "expected an object")
        if kind.namespaced:
            meta.setdefault("namespace", request.match_info["ns"])
            if meta["namespace"] != request.match_info["ns"]:
                raise InvalidInput(f"{kind.kind} {meta['namespace']}/{meta.get('name')}", "metadata.namespace",
                                   f"the namespace of the object ({meta['namespace']}) does not match the "
                                   f"namespace on the URL ({request.match_info['ns']})")
        if "name" in request.match_info and meta.get("name") != request.match_info["name"]:
            raise InvalidInput(f"{kind.kind} {meta.get('name')}", "metadata.name",
                               f"the name of the object ({meta.get('name')}) does not match the name on the URL "
                               f"({request.match_info['name']})")
        return docs

    async def replace(self, request: web.Request, kind: Kind) -> web.Response:
        """PUT: the whole object, applied only while its resourceVersion (when sent) is current."""
        key = versions.event_key(kind.kind, request.match_info.get("ns", ""), request.match_info["name"])
        async with self.routes.own_writes.settled(key):
            _, _, found = await self._existing(request, kind)
            docs = await self._body(request, kind)
            versions.check(kind.kind, found, docs[0])
            return await self._publish(request, kind, [_without_server_fields(docs[0])], status=200)

    async def patch(self, request: web.Request, kind: Kind) -> web.Response:
        key = versions.event_key(kind.kind, request.match_info.get("ns", ""), request.match_info["name"])
        async with self.routes.own_writes.settled(key):
            return await self._patch(request, kind)

    async def _patch(self, request: web.Request, kind: Kind) -> web.Response:
        try:
            ns, name, found = await self._existing(request, kind)
        except NotFound:
            if request.content_type == APPLY:  # server-side apply creates what does not exist yet
                return await self._create(request, kind, await self._body(request, kind))
            raise
        where = f"{kind.kind} {ns + '/' if ns else ''}{name}"
        patched = apply_patch(found, await request.read(), request.content_type, where)
        versions.check(kind.kind, found, patched)
        meta = patched.get("metadata") or {}
        if meta.get("name", name) != name or (kind.namespaced and meta.get("namespace", ns) != ns):
            raise InvalidInput(where, "metadata.name", "a patch may not rename the object")
        return await self._publish(request, kind, [_without_server_fields(patched)], status=200)

    async def _publish(self, request: web.Request, kind: Kind, docs: Sequence[dict[str, Any]],
                       status: int) -> web.Response:
        v = await self.routes.validate(request, [{**d, "kind": kind.kind} for d in docs])
        events = objects.events_of(v)
        await self.routes.publish(request, events)
        obj = (v.nodes or v.namespaces or v.priority_classes or v.pdbs)[0]
        return web.json_response(objects.render_object(obj, kind.api_version, kind.kind), status=status)

    async def delete(self, request: web.Request, kind: Kind) -> web.Response:
        if kind.kind == "Namespace" and request.match_info["name"] in UNDELETABLE_NAMESPACES:
            raise Forbidden("namespaces", request.match_info["name"], "this namespace may not be deleted")
        ns, name, found = await self._existing(request, kind)
        events = await self._contents(name) if kind.kind == "Namespace" else []
        await self.routes.publish(request, [*events, kind.deleted(ns, name)])
        return web.json_response(found)

    async def _contents(self, namespace: str) -> list[AnyEvent]:
        """A namespace's pods and budgets, deleted with it, as the API server's namespace controller
        deletes them (the namespace would otherwise stay in use, and listed)."""
        pods = [p for p in await self.queries.pod_states() if p.namespace == namespace and not p.deleted]
        out: list[AnyEvent] = [PodDeleted(uid=p.uid, namespace=namespace, name=p.name) for p in pods]
        return out + [PodDisruptionBudgetDeleted(namespace=namespace, name=b.name)
                      for b in await self.queries.pdbs(namespace)]

    async def patch_pod(self, request: web.Request) -> web.Response:
        ns, name = request.match_info["ns"], request.match_info["name"]
        row = await self.queries.pod(ns, name)
        if row is None or row.deleted or row.pod is None:
            if request.content_type == APPLY:  # server-side apply creates what does not exist yet
                return await self.routes.create_pod(request)
            raise NotFound("pods", name)
        live = objects.render_pod_row(row)  # as a GET shows it: with the node it is bound to
        where = f"Pod {ns}/{name}"
        patched = apply_patch(live, await request.read(), request.content_type, where)
        return _unchanged_pod(row, live, patched, where)

    async def replace_pod(self, request: web.Request) -> web.Response:
        """PUT of a pod: answered unchanged when it is the pod as submitted, refused otherwise."""
        ns, name = request.match_info["ns"], request.match_info["name"]
        row = await self.queries.pod(ns, name)
        if row is None or row.deleted or row.pod is None:
            raise NotFound("pods", name)
        [doc] = objects.parse_body(body_text(await request.read(), request.content_type), kind="Pod")
        return _unchanged_pod(row, objects.render_pod_row(row), doc, f"Pod {ns}/{name}")


def _unchanged_pod(row: PodRow, live: dict[str, Any], wanted: dict[str, Any], where: str) -> web.Response:
    """The pod as it is when `wanted` asks for no change to it (kubectl's last-applied record
    aside); a pod does not change once submitted, so any other request is refused."""
    before, after = _without_server_fields(live), _without_server_fields(wanted)
    annotations = dict((after.get("metadata") or {}).get("annotations") or {})
    annotations.pop(LAST_APPLIED, None)  # kubectl's record of its last apply changes nothing scheduled
    after_meta = {**after.get("metadata", {}), "annotations": annotations}
    for field in ("name", "namespace"):  # the URL names the pod when the body leaves them out
        after_meta.setdefault(field, before["metadata"].get(field))
    before_annotations = dict(before["metadata"].get("annotations") or {})
    before_annotations.pop(LAST_APPLIED, None)  # kept by a server-side apply after kubectl's client-side one
    before_meta = {**before.get("metadata", {}), "annotations": before_annotations}
    sections = (("metadata", before_meta, after_meta), ("spec", before.get("spec"), after.get("spec")))
    for section, old, new in sections:
        changed = _first_difference(old, new, section)
        if changed is not None:
            raise InvalidInput(where, changed, "a submitted pod does not change in Berth: delete it and "
                                               "create it again")
    return web.json_response(objects.render_pod_row(row))


def _first_difference(old: Any, new: Any, path: str) -> str | None:
    """The path of the first field that differs (`metadata.labels.app`), or None when equal."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(old.keys() | new.keys()):
            if not old.get(key) and not new.get(key):
                continue  # absent, empty and default read alike
            found = _first_difference(old.get(key), new.get(key), f"{path}.{key}")
            if found is not None:
                return found
        return None
    return None if old == new else path
