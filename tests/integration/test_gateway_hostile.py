"""Hostile input at every endpoint of the gateway (property-based): whatever the method, path, query,
headers and body, never a 500 or a traceback in the answer, never anything published without the
admin token, and nothing published by a request that was refused (no partial apply)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from services.gateway.app import build_app
from services.gateway.settings import GatewaySettings
from shared.adapters.memory import MemoryPublisher
from shared.adapters.postgres import make_engine
from shared.settings import load_service_settings

from .backends import Backend, create_test_database

pytestmark = pytest.mark.integration

ADMIN, VIEWER = "admin-token", "viewer-token"
PATHS = [
    "/", "/healthz", "/readyz", "/metrics", "/api/v1/nodes", "/api/v1/nodes/{name}", "/api/v1/pods",
    "/api/v1/namespaces/{ns}/pods", "/api/v1/namespaces/{ns}/pods/{name}", "/api/v1/namespaces",
    "/apis/berth.dev/v1/apply", "/apis/scheduling.k8s.io/v1/priorityclasses", "/apis/policy/v1/poddisruptionbudgets",
    "/apis/berth.dev/v1/events", "/apis/berth.dev/v1/overview", "/apis/berth.dev/v1/replay",
    "/apis/berth.dev/v1/explain/{ns}/{name}", "/ui/", "/ui/login", "/ui/pods/{ns}/{name}", "/ui/nodes/{name}",
    "/ui/static/{name}", "/api/{name}", "/apis/{name}/{ns}", "/version", "/api", "/api/v1", "/apis",
    "/api/v1/events", "/api/v1/namespaces/{ns}/events", "/openapi/v3", "/openapi/v3/{name}",
    "/api/v1/namespaces/{name}", "/apis/scheduling.k8s.io/v1/priorityclasses/{name}",
    "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets",
    "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets/{name}",
    "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
]
QUERY_KEYS = ["labelSelector", "fieldSelector", "limit", "continue", "fieldValidation", "dryRun", "topic", "type",
              "pod", "after", "group", "events", "watch", "resourceVersion", "allowWatchBookmarks", "includeDeleted",
              "{name}"]

names = st.one_of(st.text(min_size=0, max_size=20), st.sampled_from(["default", "n1", "..", "%2e%2e", "a/b", "\x00"]))
scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True),
                    st.text(max_size=30))
json_values = st.recursive(scalars, lambda kids: st.one_of(st.lists(kids, max_size=4),
                                                          st.dictionaries(st.text(max_size=12), kids, max_size=4)),
                           max_leaves=20)
kinds = st.sampled_from(["Pod", "Node", "PriorityClass", "PodDisruptionBudget", "Namespace", "List", "Service", ""])


@st.composite
def objects(draw: st.DrawFn) -> dict[str, Any]:
    """Something shaped like a Kubernetes object, with random values where the fields go."""
    obj: dict[str, Any] = {"kind": draw(kinds), "metadata": draw(st.one_of(
        st.fixed_dictionaries({"name": names}, optional={"namespace": names, "labels": json_values}), json_values))}
    if draw(st.booleans()):
        obj["spec"] = draw(st.one_of(json_values, st.fixed_dictionaries(
            {"containers": st.lists(st.fixed_dictionaries({"name": names}, optional={"resources": json_values}),
                                    max_size=2)}, optional={"nodeName": names, "priority": scalars})))
    if draw(st.booleans()):
        obj["status"] = draw(json_values)
    return obj


bodies = st.one_of(
    st.binary(max_size=200),
    st.text(max_size=200).map(str.encode),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.lists(objects(), min_size=1, max_size=3).map(lambda docs: "\n---\n".join(json.dumps(d) for d in docs).encode()),
)
auths = st.sampled_from([None, ADMIN, VIEWER, "wrong", "Basic " + ADMIN])


@st.composite
def hostile_requests(draw: st.DrawFn) -> dict[str, Any]:
    path = draw(st.sampled_from(PATHS)).format(name=draw(names), ns=draw(names))
    query = draw(st.dictionaries(st.sampled_from(QUERY_KEYS), st.one_of(st.text(max_size=20), st.integers().map(str)),
                                 max_size=3))
    return {"method": draw(st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH"])), "path": path,
            "query": query, "auth": draw(auths), "body": draw(bodies),
            "content_type": draw(st.sampled_from(["application/yaml", "application/json", "text/plain", "%%%",
                                                  "application/merge-patch+json", "application/json-patch+json",
                                                  "application/strategic-merge-patch+json",
                                                  "application/apply-patch+yaml"]))}


@pytest.fixture(scope="module")
def database_url(backend: Backend) -> Iterator[str]:
    _, url = asyncio.run(create_test_database(backend))
    yield url


async def _probe(database_url: str, req: dict[str, Any]) -> None:
    base = load_service_settings("gateway", {"DATABASE_URL": database_url})
    settings_ = GatewaySettings(base=base, api_token=ADMIN, viewer_token=VIEWER,
                                readable_within_s=0)  # no projector: a write is never read back
    publisher = MemoryPublisher()
    engine = make_engine(database_url, pool_size=1)
    client = TestClient(TestServer(build_app(settings_, publisher, engine)))
    await client.start_server()
    try:
        headers = {"Content-Type": req["content_type"]}
        if req["auth"] is not None:
            headers["Authorization"] = req["auth"] if req["auth"].startswith("Basic") else f"Bearer {req['auth']}"
        query = {**req["query"], "timeoutSeconds": "1"}  # a watch drawn here ends on its own
        try:
            resp = await asyncio.wait_for(client.request(req["method"], req["path"], params=query, headers=headers,
                                                         data=req["body"] if req["method"] != "GET" else None,
                                                         allow_redirects=False), 10)
        except ValueError:
            return  # a path the HTTP client itself refuses to send (a NUL byte): nothing reached the gateway
        text = await resp.text(errors="replace")
        assert resp.status < 500 or (req["path"] == "/readyz" and resp.status == 503), (resp.status, text[:500])
        assert "Traceback" not in text
        if req["auth"] != ADMIN:
            assert publisher.published == [], "published without the admin token"
        if resp.status >= 400:
            assert publisher.published == [], "a refused request published something"
    finally:
        await client.close()
        await engine.dispose()


GOOD_POD = b"kind: Pod\nmetadata: {name: ok}\nspec: {containers: [{name: c}]}\n"
APPLY = {"method": "POST", "path": "/apis/berth.dev/v1/apply", "query": {}, "content_type": "application/yaml"}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(req=hostile_requests())
@example(req={**APPLY, "auth": ADMIN, "body": GOOD_POD})  # published: the admin's valid apply
@example(req={**APPLY, "auth": ADMIN, "body": GOOD_POD + b"---\nkind: Pod\nmetadata: {name: Bad_}\n"})  # all or nothing
@example(req={**APPLY, "auth": VIEWER, "body": GOOD_POD})
def test_no_hostile_request_breaks_the_gateway_or_gets_past_its_tokens(database_url: str, req: dict[str, Any]) -> None:
    asyncio.run(_probe(database_url, req))
