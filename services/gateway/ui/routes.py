"""The web view's routes: three pages (plain HTML that a little JavaScript fills from the gateway's
JSON) and the overview's JSON. Everything the pages need ships in this package: no CDN."""

from __future__ import annotations

import asyncio
import html
import json
import time
from datetime import datetime
from importlib import resources

import msgspec
from aiohttp import web

from shared.ports import EventStoreReader, ReadModelReader

from ..auth import COOKIE, Tokens
from .overview import ZONE, NodeSummary, node_summary, overview, pod_requests

STATIC = {"ui.js": "application/javascript", "ui.css": "text/css"}
WAIT_POLL_S = 0.2
"""How often a waiting overview request looks at the event store's last seq (one indexed query)."""


def _page(title: str, body: str, script: str) -> web.Response:
    text = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)} · Berth</title>
<link rel="stylesheet" href="/ui/static/ui.css"></head>
<body><header><a href="/ui/">Berth</a> <a class="nav" href="/ui/replay">Replay</a>
<span id="status"></span></header>
<main>{body}</main>
<script src="/ui/static/ui.js"></script><script>{script}</script></body></html>"""
    return web.Response(text=text, content_type="text/html")


LOGIN = """<h1>Sign in</h1><form method="post" action="/ui/login"><p><label>Token
<input id="token" name="token" type="password" autocomplete="current-password" size="40"></label>
<button id="sign-in" type="submit">Sign in</button></p></form><p class="legend">The viewer token (or the
admin token): <code>viewer_token</code> in the cluster's <code>berth.json</code> for <code>berth up</code>,
<code>BERTH_VIEWER_TOKEN</code> for compose.</p>{error}"""


class UiRoutes:
    def __init__(self, queries: ReadModelReader, store: EventStoreReader, tokens: Tokens) -> None:
        self.queries, self.store, self.tokens = queries, store, tokens
        self._cached: tuple[tuple[int, str], bytes] | None = None
        """The last overview, by the event store's last seq and the grouping: polls of an idle
        cluster cost one indexed query, not a read of every pod."""
        self._nodes: dict[str, tuple[datetime, NodeSummary]] = {}
        """Node name → (its row's last change, its summary): a node is read again only once changed."""
        self._requests: dict[str, tuple[int, int]] = {}
        """Pod uid → its requests: a pod never changes, so its spec is read once."""

    def install(self, app: web.Application) -> None:
        r = app.router
        r.add_get("/", self.root)
        r.add_get("/ui/login", self.login_page)
        r.add_post("/ui/login", self.login)
        r.add_get("/ui/", self.overview_page)
        r.add_get("/ui/pods/{ns}/{name}", self.pod_page)
        r.add_get("/ui/nodes/{name}", self.node_page)
        r.add_get("/ui/replay", self.replay_page)
        r.add_get("/ui/static/{file}", self.static)
        r.add_get("/apis/berth.dev/v1/overview", self.overview_json)

    async def root(self, request: web.Request) -> web.Response:
        raise web.HTTPFound("/ui/")

    async def login_page(self, request: web.Request) -> web.Response:
        return _page("Sign in", LOGIN.format(error=""), "")

    async def login(self, request: web.Request) -> web.Response:
        """A token that names a role is kept in an HTTP-only cookie the pages' requests then carry."""
        form = await request.post()
        token = str(form.get("token", "")).strip()
        if self.tokens.role(token) is None:
            page = _page("Sign in", LOGIN.format(error='<p id="error">That token is not accepted.</p>'), "")
            page.set_status(401)
            return page
        response = web.HTTPSeeOther("/ui/")
        response.set_cookie(COOKIE, token, httponly=True, samesite="Strict", path="/",
                            secure=request.secure)
        raise response

    async def overview_page(self, request: web.Request) -> web.Response:
        body = """<h1>Cluster</h1><p id="counts"></p>
<h2>Pending pods</h2><table id="pending"><thead><tr><th>Namespace</th><th>Name</th><th>Why</th></tr></thead>
<tbody></tbody></table>
<h2>Nodes</h2><p class="legend">Each cell is a node, coloured by its fullest resource (CPU, memory or pod
count); hover for numbers, click for the node.</p><div id="nodes"></div>"""
        return _page("Cluster", body, "berth.overview();")

    async def pod_page(self, request: web.Request) -> web.Response:
        ns, name = request.match_info["ns"], request.match_info["name"]
        body = f"""<h1>Pod {html.escape(ns)}/{html.escape(name)}</h1><dl id="fields"></dl>
<h2>Events</h2><table id="events"><thead><tr><th>Type</th><th>Reason</th><th>From</th><th>Message</th></tr>
</thead><tbody></tbody></table>
<h2>Explain <select id="attempt"></select></h2><p id="explain-summary"></p>
<table id="explain"><thead></thead><tbody></tbody></table>"""
        return _page(f"{ns}/{name}", body, f"berth.pod({_js(ns)}, {_js(name)});")

    async def node_page(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        body = f"""<h1>Node {html.escape(name)}</h1><dl id="fields"></dl>
<h2>Requested of allocatable</h2><table id="resources"><thead><tr><th>Resource</th><th>Requested</th>
<th>Allocatable</th><th></th></tr></thead><tbody></tbody></table>
<h2>Pods</h2><table id="pods"><thead><tr><th>Namespace</th><th>Name</th><th>CPU</th><th>Memory</th></tr></thead>
<tbody></tbody></table>"""
        return _page(name, body, f"berth.node({_js(name)});")

    async def replay_page(self, request: web.Request) -> web.Response:
        body = """<h1>Replay</h1><p>Every recorded decision made again from the event log; with a
KubeSchedulerConfiguration below, what it would have changed, side by side with what was decided.</p>
<textarea id="config" rows="8" cols="90" placeholder="apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles: ..."></textarea><br><button id="run">Replay</button>
<p id="summary"></p><table id="divergences"><thead><tr><th>Kind</th><th>Pod</th><th>Attempt</th>
<th>Recorded</th><th>Replayed</th><th>Plugin</th><th>Detail</th></tr></thead><tbody></tbody></table>"""
        return _page("Replay", body, "berth.replay();")

    async def static(self, request: web.Request) -> web.Response:
        name = request.match_info["file"]
        if name not in STATIC:
            raise web.HTTPNotFound()
        text = resources.files(__package__).joinpath("static", name).read_text()
        return web.Response(text=text, content_type=STATIC[name], headers={"Cache-Control": "max-age=60"})

    async def overview_json(self, request: web.Request) -> web.Response:
        """The overview; with `after=SEQ`, answered once the event store has grown past SEQ (or after
        `timeoutSeconds`, 25 by default): the page asks again at once, so it is pushed each change."""
        seq = await self.store.last_seq()
        after = request.query.get("after", "")
        if after.isdigit():
            timeout = min(60.0, float(request.query.get("timeoutSeconds", "25") or 25))
            deadline = time.monotonic() + timeout
            while seq <= int(after) and time.monotonic() < deadline:
                await asyncio.sleep(WAIT_POLL_S)
                seq = await self.store.last_seq()
        key = (seq, request.query.get("groupBy", ZONE))
        if self._cached is None or self._cached[0] != key:
            nodes = await self._node_summaries()
            pods = await self.queries.pod_states()
            unknown = [p.uid for p in pods if p.uid not in self._requests]
            for row in await self.queries.pods_by_uid(unknown):
                self._requests[row.uid] = pod_requests(row)
            data = overview(nodes, pods, self._requests, group_by=key[1])
            self._cached = (key, msgspec.json.encode({**data, "seq": seq}))
        return web.Response(body=self._cached[1], content_type="application/json")

    async def _node_summaries(self) -> list[NodeSummary]:
        versions = await self.queries.node_versions()
        for gone in self._nodes.keys() - versions.keys():
            del self._nodes[gone]
        changed = [name for name, at in versions.items() if self._nodes.get(name, (None,))[0] != at]
        for row in await self.queries.nodes_by_name(changed):
            self._nodes[row.name] = (row.updated_at, node_summary(row))
        return [summary for _, summary in self._nodes.values()]


def _js(text: str) -> str:
    """A string for a script element: JSON, with "</" broken so it cannot end the element."""
    return json.dumps(text).replace("</", "<\\/")
