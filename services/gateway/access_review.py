"""`kubectl auth can-i`: what the presented token may do, as the API server's authorizer answers.

Berth's authorizer is its two tokens (`auth`): the admin token may do whatever the API serves, the
viewer token may read it (get, list, watch). A review of a resource Berth does not serve, or of a
verb its resource does not take, is "no" with the reason, for either token.

    POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews   one verb on one resource or path
    POST /apis/authorization.k8s.io/v1/selfsubjectrulesreviews    every rule (`kubectl auth can-i --list`)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web

from shared.errors import InvalidInput
from shared.model.loader import parse_documents

from .auth import ACCESS_REVIEWS, FORBIDDEN, RULES_REVIEWS, Role, Tokens, presented
from .discovery import DISCOVERED, REVIEWS, WRITE, Resource, subresources_of
from .protobuf_body import body_text

GROUP = "authorization.k8s.io"

READS = ("get", "list", "watch")
READABLE_PATHS = ("/healthz", "/readyz", "/metrics", "/version", "/openapi/*", "/api", "/api/*", "/apis", "/apis/*")
"""Non-resource paths either token may GET."""


def _served(group: str, resource: str, subresource: str) -> tuple[str, ...] | None:
    """The verbs Berth serves on that resource (or subresource; `*`: every resource of the group);
    None when it serves no such thing."""
    if resource == "*":
        verbs = {v for r in DISCOVERED if r.group == group for v in r.verbs}
        return tuple(sorted(verbs)) if verbs else None
    found = next((r for r in DISCOVERED if r.name == resource and r.group == group), None)
    if found is None:
        return None
    if not subresource:
        return found.verbs
    sub = next((s for s in subresources_of(found) if s.name == subresource), None)
    return sub.verbs if sub is not None else None


def access(role: Role, spec: dict[str, Any]) -> dict[str, Any]:
    """The status of a SelfSubjectAccessReview with `spec`, for the token's role."""
    attributes, path = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if isinstance(attributes, dict) == isinstance(path, dict):
        raise InvalidInput("SelfSubjectAccessReview", "spec",
                           "exactly one of resourceAttributes and nonResourceAttributes must be specified")
    if isinstance(attributes, dict):
        verb, resource = str(attributes.get("verb") or ""), str(attributes.get("resource") or "")
        group, subresource = str(attributes.get("group") or ""), str(attributes.get("subresource") or "")
        verbs = _served(group, resource, subresource)
        what = f"{resource}/{subresource}" if subresource else resource
        if verbs is None:
            return {"allowed": False, "reason": f"Berth serves no {what}" + (f" in group {group!r}" if group else "")}
        if (verb == "*" and not set(WRITE) <= set(verbs)) or (verb != "*" and verb not in verbs):
            return {"allowed": False, "reason": f"Berth does not {verb} {what}: {', '.join(sorted(verbs))}"}
        asking = group == GROUP and resource in {r.name for r in REVIEWS}  # every token may ask what it may do
        return _as(role, reading=verb in READS or asking)
    assert isinstance(path, dict)
    wanted = str(path.get("path") or "")
    if str(path.get("verb") or "") == "get" and any(
            wanted == p or (p.endswith("*") and wanted.startswith(p[:-1])) for p in READABLE_PATHS):
        return {"allowed": True}
    return {"allowed": False, "reason": f"Berth answers GET alone, on {', '.join(READABLE_PATHS)}"}


def _as(role: Role, *, reading: bool) -> dict[str, Any]:
    if role == "admin" or reading:
        return {"allowed": True}
    return {"allowed": False, "reason": FORBIDDEN}


def rules(role: Role) -> dict[str, Any]:
    """The status of a SelfSubjectRulesReview: the token's rules, one per resource Berth serves."""
    resource_rules = []
    for r in DISCOVERED:
        resource_rules += _rules(role, r)
    return {"resourceRules": resource_rules,
            "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": list(READABLE_PATHS)}], "incomplete": False}


def _rules(role: Role, r: Resource) -> list[dict[str, Any]]:
    verbs = [v for v in r.verbs if role == "admin" or v in READS or r in REVIEWS]
    out = [{"verbs": verbs, "apiGroups": [r.group], "resources": [r.name]}] if verbs else []
    for s in subresources_of(r):
        sub_verbs = [v for v in s.verbs if role == "admin" or v in READS]
        if sub_verbs:
            out.append({"verbs": sub_verbs, "apiGroups": [r.group], "resources": [f"{r.name}/{s.name}"]})
    return out


def install(app: web.Application, tokens: Tokens) -> None:
    async def review(request: web.Request, kind: str, answer: Callable[[Role, dict[str, Any]], dict[str, Any]]
                     ) -> web.Response:
        docs = parse_documents(body_text(await request.read(), request.content_type), "request body")
        spec = docs[0].get("spec") if len(docs) == 1 else None
        if not isinstance(spec, dict):
            raise InvalidInput(kind, "spec", "Required value: the review's spec")
        role = tokens.role(presented(request)) or "viewer"  # the auth middleware let no one else in
        return web.json_response({"apiVersion": f"{GROUP}/v1", "kind": kind, "metadata": {"creationTimestamp": None},
                                  "spec": spec, "status": answer(role, spec)}, status=201)

    async def access_review(request: web.Request) -> web.Response:
        return await review(request, "SelfSubjectAccessReview", access)

    async def rules_review(request: web.Request) -> web.Response:
        return await review(request, "SelfSubjectRulesReview", lambda role, spec: rules(role))

    app.router.add_post(ACCESS_REVIEWS, access_review)
    app.router.add_post(RULES_REVIEWS, rules_review)
