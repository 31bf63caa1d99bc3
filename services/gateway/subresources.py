"""The `binding` and `status` subresources.

    POST  /api/v1/namespaces/{ns}/pods/{name}/binding   another scheduler binds its pod
    GET   /api/v1/namespaces/{ns}/pods/{name}/status    the pod (its status is the scheduler's)
    GET   /api/v1/nodes/{name}/status                   the node
    PATCH /api/v1/nodes/{name}/status                   a node's status (allocatable, conditions…)

A binding is asked of the node's binder, as Berth's own binds are: the binder is the node's single
writer, so a pod bound through the API is checked against the node's committed pods and never
over-commits it (the API server would leave that to the kubelet). Only a pod of a scheduler Berth
does not run may be bound so (its `schedulerName` names no profile): Berth's own pods are its queue's
to place. The answer waits for the binder's, up to BIND_WAIT_S: 201 once bound, 409 with the
binder's reason when refused, 202 when the binder has not answered yet (the request stays in the
log and is answered when the binder runs).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import Any

from aiohttp import web

from shared.errors import InvalidInput, NotFound
from shared.events import BindRequested

from . import objects, versions
from .params import dry_run
from .patching import apply_patch
from .protobuf_body import body_json
from .route_host import RouteHost

BIND_WAIT_S = 5.0
POLL_S = 0.05
PREFIX = "binding/"
"""Attempt ids of bindings asked through the API (`binding/<uid>/<nonce>`)."""


def _success(code: int, message: str) -> web.Response:
    return web.json_response({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                              "message": message, "code": code}, status=code)


def _conflict(message: str, name: str) -> web.Response:
    return web.json_response({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                              "reason": "Conflict", "message": message, "code": 409,
                              "details": {"name": name, "kind": "pods/binding"}}, status=409)


class SubresourceRoutes:
    def __init__(self, routes: RouteHost, scheduler_names: frozenset[str]) -> None:
        self.routes, self.queries = routes, routes.queries
        self.scheduler_names = scheduler_names
        self._binding = asyncio.Lock()
        """One binding decision at a time in this gateway: two for one pod would both see it unbound."""
        self._asked: set[str] = set()
        """Pods whose binding this gateway asked and awaits: their request may not be projected yet."""

    def install(self, app: web.Application) -> None:
        r = app.router
        r.add_post("/api/v1/namespaces/{ns}/pods/{name}/binding", self.bind)
        r.add_get("/api/v1/namespaces/{ns}/pods/{name}/status", self.pod_status)
        r.add_get("/api/v1/nodes/{name}/status", self.node_status)
        r.add_patch("/api/v1/nodes/{name}/status", self.patch_node_status)

    async def pod_status(self, request: web.Request) -> web.Response:
        ns, name = request.match_info["ns"], request.match_info["name"]
        row = await self.queries.pod(ns, name)
        if row is None or row.deleted:
            raise NotFound("pods", name)
        return web.json_response(objects.render_pod_row(row))

    async def node_status(self, request: web.Request) -> web.Response:
        row = await self.queries.node(request.match_info["name"])
        if row is None:
            raise NotFound("nodes", request.match_info["name"])
        return web.json_response(objects.render_node_row(row))

    async def patch_node_status(self, request: web.Request) -> web.Response:
        """Only `status` changes through this subresource, as on the API server."""
        async with self.routes.own_writes.settled(request.match_info["name"]):
            return await self._patch_node_status(request)

    async def _patch_node_status(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        known = await versions.read(self.routes.store, "Node", [("", name)])
        row = await self.queries.node(name)
        if row is None:
            raise NotFound("nodes", name)
        [live] = await versions.stamped(self.routes.store, "Node", [objects.render_node_row(row)], known)
        patched = apply_patch(live, await request.read(), request.content_type, f"Node {name}")
        versions.check("Node", live, patched)
        live["metadata"].pop("resourceVersion", None)
        doc = {**live, "status": patched.get("status") or {}}
        v = await self.routes.validate(request, [doc])
        await self.routes.publish(request, objects.events_of(v))
        return web.json_response(objects.render_node(v.nodes[0]))

    async def bind(self, request: web.Request) -> web.Response:
        ns, name = request.match_info["ns"], request.match_info["name"]
        node = _target(await request.read(), request.content_type, f"Binding {ns}/{name}")
        async with self._binding:  # the checks and the publish only: the wait below is not serialised
            row = await self.queries.pod(ns, name)
            if row is None or row.deleted or row.pod is None:
                raise NotFound("pods", name)
            scheduler = row.pod.spec.scheduler_name or "default-scheduler"
            if scheduler in self.scheduler_names:
                return _conflict(f"pod {name} is scheduled by Berth's {scheduler!r} profile: only a pod of "
                                 "another scheduler is bound through the API", name)
            if row.node_name:
                return _conflict(f"pod {name} is already assigned to node {row.node_name!r}", name)
            if row.uid in self._asked or any(b.state == "Requested" for b in await self.queries.bindings(row.uid)):
                return _conflict(f"pod {name} is being bound already", name)
            if dry_run(request):
                return _success(201, "")
            attempt = f"{PREFIX}{row.uid}/{secrets.token_hex(4)}"
            await self.routes.publish(request, [BindRequested(pod_uid=row.uid, pod=row.pod, node_name=node,
                                                              attempt_id=attempt, seed=0)])
            self._asked.add(row.uid)
        try:
            outcome = await self._outcome(row.uid, attempt)
        finally:
            self._asked.discard(row.uid)
        if outcome is None:
            return _success(202, f"binding of pod {name} to node {node!r} asked; its binder has not answered yet")
        if outcome[0] == "Bound":
            return _success(201, "")
        return _conflict(f"pod {name} cannot be bound to node {node!r}: {outcome[1]}", name)

    async def _outcome(self, uid: str, attempt: str) -> tuple[str, str] | None:
        deadline = time.monotonic() + BIND_WAIT_S
        while time.monotonic() < deadline:
            found = next((b for b in await self.queries.bindings(uid) if b.attempt_id == attempt), None)
            if found is not None and found.state != "Requested":
                return found.state, found.reason or ""
            await asyncio.sleep(POLL_S)
        return None


def _target(body: bytes, content_type: str, where: str) -> str:
    """The node a Binding names (`target: {kind: Node, name: …}`), sent as JSON or protobuf."""
    try:
        doc: Any = body_json(body or b"null", content_type)
    except ValueError as exc:
        raise InvalidInput(where, "body", f"not valid JSON: {exc}") from None
    target = doc.get("target") if isinstance(doc, dict) else None
    if not isinstance(target, dict) or not isinstance(target.get("name"), str) or not target["name"]:
        raise InvalidInput(where, "target.name", "required: the node to bind to")
    if target.get("kind", "Node") != "Node":
        raise InvalidInput(where, "target.kind", f"must be Node, got {target.get('kind')!r}")
    return str(target["name"])

