"""Who may do what at the gateway.

Every request to the API (`/api/…`, `/apis/…`), the event log, explain and the web view (`/ui/…`)
carries a token, as `Authorization: Bearer <token>` or, for a browser, the cookie the web view's
sign-in sets. Two roles:

- **viewer** (`BERTH_VIEWER_TOKEN`, optional): reads: lists, the event log, explain, the web view;
- **admin** (`BERTH_API_TOKEN`): everything, writes included.

No token, or one matching neither, gets 401; the viewer token on a write gets 403. Tokens are
compared in constant time, both of them every time, so the answer's timing tells nothing about
which token came close. `/healthz` and `/readyz` stay open; `/metrics` is open unless
`BERTH_METRICS_AUTH=1`, then it needs either token. The web view's stylesheet, script and sign-in
page carry no cluster data and stay open.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from aiohttp import web

Role = Literal["viewer", "admin"]
COOKIE = "berth_token"
MUTATING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
OPEN_PATHS = frozenset({"/", "/healthz", "/readyz", "/ui/login"})
OPEN_PREFIXES = ("/ui/static/",)
ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
RULES_REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"
READING_POSTS = frozenset({"/apis/berth.dev/v1/replay", ACCESS_REVIEWS, RULES_REVIEWS})
"""POSTs that change nothing: replay with a configuration sent in the body (the web view's Replay),
and `kubectl auth can-i`'s reviews (`access_review`), which either token may ask."""
UNAUTHORIZED = "a bearer token is required: Authorization: Bearer <token>"
FORBIDDEN = "the viewer token may only read: this request needs the admin token"

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
Refusal = Callable[[int, str, str], web.StreamResponse]


@dataclass(frozen=True)
class Tokens:
    admin: str
    viewer: str = ""

    def role(self, presented: str) -> Role | None:
        given = presented.encode()
        is_admin = hmac.compare_digest(given, self.admin.encode())
        is_viewer = bool(self.viewer) & hmac.compare_digest(given, self.viewer.encode())
        return "admin" if is_admin else "viewer" if is_viewer else None


def presented(request: web.Request) -> str:
    """The request's token: its bearer token, else the web view's cookie ("" when neither)."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return request.cookies.get(COOKIE, "")


def needed(request: web.Request, metrics_auth: bool) -> Role | None:
    """The least role the request needs; None: open to anyone."""
    path = request.path
    if path in OPEN_PATHS or path.startswith(OPEN_PREFIXES):
        return None
    if path == "/metrics":
        return "viewer" if metrics_auth else None
    return "admin" if request.method in MUTATING and path not in READING_POSTS else "viewer"


def middleware(tokens: Tokens, refuse: Refusal, *,
               metrics_auth: bool = False) -> Callable[..., Awaitable[web.StreamResponse]]:
    """Refuses a request without the role it needs before any handler runs; a page of the web
    view sends a browser without a token to the sign-in page instead."""

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        want = needed(request, metrics_auth)
        if want is None:
            return await handler(request)
        role = tokens.role(presented(request))
        if role is None:
            if request.method == "GET" and request.path.startswith("/ui/"):
                raise web.HTTPSeeOther("/ui/login")
            return refuse(401, "Unauthorized", UNAUTHORIZED)
        if want == "admin" and role != "admin":
            return refuse(403, "Forbidden", FORBIDDEN)
        return await handler(request)

    return check
