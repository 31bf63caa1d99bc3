"""The gateway against the real broker and database, with the projector running beside it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer
from sqlalchemy.ext.asyncio import AsyncEngine

from services.gateway.app import build_app
from services.gateway.settings import GatewaySettings
from services.projector.app import build as build_projector
from services.projector.settings import ProjectorSettings
from shared.adapters.kafka import KafkaPublisher, read_topic
from shared.adapters.postgres import AcceptedIntents

from .fixtures import BerthTestEnv
from .helpers import eventually

pytestmark = pytest.mark.integration

TOKEN = "s3cret"
VIEWER = "r3ader"
AUTH = {"Authorization": f"Bearer {TOKEN}"}

CLUSTER = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {zone: a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-b}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: web-0}
spec:
  priorityClassName: high
  containers: [{name: c, image: nginx, resources: {requests: {cpu: 500m}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: prod}
spec:
  containers: [{name: c, image: nginx}]
"""

BAD_POD = """{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad"},
 "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "lots"}}}]}}"""


@dataclass
class Api:
    client: TestClient
    env: BerthTestEnv


@pytest.fixture
async def api(berth_env: BerthTestEnv, engine: AsyncEngine, publisher: KafkaPublisher) -> AsyncIterator[Api]:
    settings = GatewaySettings(base=berth_env.settings.for_service("gateway"), api_token=TOKEN, viewer_token=VIEWER)
    projector = build_projector(ProjectorSettings(base=berth_env.settings.for_service("projector")), engine,
                                registry=berth_env.registry, serve_http=False)
    task = asyncio.create_task(projector.run())
    client = TestClient(TestServer(build_app(settings, publisher, engine, registry=berth_env.registry)), headers=AUTH)
    await client.start_server()
    try:
        yield Api(client, berth_env)
    finally:
        await client.close()
        projector.request_stop()
        await asyncio.wait_for(task, 10)


async def _pods(api: Api) -> dict[str, dict]:
    resp = await api.client.get("/api/v1/pods")
    assert resp.status == 200
    return {f"{p['metadata']['namespace']}/{p['metadata']['name']}": p for p in (await resp.json())["items"]}


async def test_a_dry_run_validates_and_publishes_nothing(api: Api) -> None:
    resp = await api.client.post("/apis/berth.dev/v1/apply?dryRun=All", data=CLUSTER)
    body = await resp.json()
    assert resp.status == 200 and body["dryRun"] is True and body["published"] == 0 and body["items"]
    bad = await api.client.post("/apis/berth.dev/v1/apply?dryRun=Some", data=CLUSTER)
    assert bad.status == 422 and (await bad.json())["details"]["field"] == "dryRun"
    for topic in ("pods", "nodes"):
        assert [e async for e in read_topic(api.env.settings, topic, registry=api.env.registry)] == []


async def test_a_dry_run_of_any_write_publishes_nothing(api: Api) -> None:
    """kubectl's --dry-run=server on create, replace and delete: answered, nothing published."""
    pod = '{"kind": "Pod", "metadata": {"name": "dry"}, "spec": {"containers": [{"name": "c"}]}}'
    created = await api.client.post("/api/v1/namespaces/default/pods?dryRun=All", data=pod, headers=AUTH)
    assert created.status == 201 and (await created.json())["metadata"]["name"] == "dry"
    node = CLUSTER.split("---")[1]
    assert (await api.client.post("/api/v1/nodes?dryRun=All", data=node, headers=AUTH)).status == 201
    assert (await api.client.post("/api/v1/nodes?dryRun=Some", data=node, headers=AUTH)).status == 422
    for topic in ("pods", "nodes"):
        assert [e async for e in read_topic(api.env.settings, topic, registry=api.env.registry)] == []


async def test_a_delete_whose_options_say_dry_run_deletes_nothing(api: Api) -> None:
    """kubectl's `delete --dry-run=server` says so in the DeleteOptions body, not the query."""
    assert (await api.client.post("/apis/berth.dev/v1/apply", data=CLUSTER, headers=AUTH)).status == 200

    async def visible() -> bool:
        return (await api.client.get("/api/v1/namespaces/prod/pods/web-1")).status == 200 and (
            await api.client.get("/api/v1/nodes/node-a")).status == 200

    await eventually(visible, timeout=15)
    dry = '{"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["All"], "propagationPolicy": "Background"}'
    for path in ("/api/v1/namespaces/prod/pods/web-1", "/api/v1/nodes/node-a"):
        answered = await api.client.delete(path, data=dry, headers={**AUTH, "Content-Type": "application/json"})
        assert answered.status == 200, await answered.text()
        assert (await api.client.get(path)).status == 200, f"{path}: a dry run deletes nothing"
    odd = await api.client.delete("/api/v1/nodes/node-a", data='{"dryRun": ["Some"]}', headers=AUTH)
    assert odd.status == 422 and (await odd.json())["details"]["field"] == "dryRun"
    not_json = await api.client.delete("/api/v1/nodes/node-a", data="dryRun", headers=AUTH)
    assert not_json.status == 422
    for topic, deleted in (("pods", "PodDeleted"), ("nodes", "NodeDeleted")):
        seen = [e async for e in read_topic(api.env.settings, topic, registry=api.env.registry)]
        assert not [env for _, env, _ in seen if getattr(env, "type", None) == deleted], topic
    assert (await api.client.get("/api/v1/nodes/node-a")).status == 200


async def test_apply_then_pods_are_pending(api: Api) -> None:
    resp = await api.client.post("/apis/berth.dev/v1/apply", data=CLUSTER, headers=AUTH)
    assert resp.status == 200, await resp.text()
    result = await resp.json()
    assert result["published"] == 5 and result["counts"] == {"created": 5}

    # Answered once readable, though pods and nodes are projected from topics of their own.
    assert "Warning" not in resp.headers, resp.headers["Warning"]
    assert len(await _pods(api)) == 2
    assert len((await (await api.client.get("/api/v1/nodes")).json())["items"]) == 2
    # The same file again changes nothing, and publishes nothing (the scheduler sees no change).
    again = await (await api.client.post("/apis/berth.dev/v1/apply", data=CLUSTER, headers=AUTH)).json()
    assert again["published"] == 0 and again["counts"] == {"unchanged": 5}, again
    relabelled = CLUSTER.replace("labels: {zone: a}", "labels: {zone: b}", 1)
    assert relabelled != CLUSTER
    changed = await (await api.client.post("/apis/berth.dev/v1/apply", data=relabelled, headers=AUTH)).json()
    assert changed["published"] == 1 and changed["counts"] == {"configured": 1, "unchanged": 4}, changed
    pods = await _pods(api)
    web0 = pods["default/web-0"]
    assert web0["status"]["phase"] == "Pending" and web0["spec"]["priority"] == 1000
    assert len(web0["metadata"]["uid"]) == 36  # a uuid4 given by the gateway
    one = await api.client.get("/api/v1/namespaces/prod/pods/web-1")
    assert one.status == 200 and (await one.json())["status"]["conditions"][0]["type"] == "PodScheduled"
    assert (await api.client.get("/api/v1/namespaces/prod/pods")).status == 200
    nodes = await (await api.client.get("/api/v1/nodes")).json()
    assert [n["metadata"]["name"] for n in nodes["items"]] == ["node-a", "node-b"]
    assert (await api.client.get("/api/v1/nodes/node-a")).status == 200
    assert (await api.client.get("/api/v1/nodes/nope")).status == 404

    # A pod referring to the stored PriorityClass; then a duplicate of it.
    pod = ('{"kind": "Pod", "metadata": {"name": "late"}, '
           '"spec": {"priorityClassName": "high", "containers": [{"name": "c"}]}}')
    created = await api.client.post("/api/v1/namespaces/default/pods", data=pod, headers=AUTH)
    assert created.status == 201 and (await created.json())["spec"]["priority"] == 1000

    async def late_visible() -> bool:
        return "default/late" in await _pods(api)

    await eventually(late_visible, timeout=15)
    dup = await api.client.post("/api/v1/namespaces/default/pods", data=pod, headers=AUTH)
    assert dup.status == 409 and (await dup.json())["reason"] == "AlreadyExists"
    assert (await api.client.post("/api/v1/nodes", data=CLUSTER.split("---")[1], headers=AUTH)).status == 409

    deleted = await api.client.delete("/api/v1/namespaces/default/pods/late", headers=AUTH)
    assert deleted.status == 200
    assert (await api.client.delete("/api/v1/namespaces/default/pods/nope", headers=AUTH)).status == 404
    assert (await api.client.delete("/api/v1/nodes/node-b", headers=AUTH)).status == 200

    async def gone() -> bool:
        nodes = await (await api.client.get("/api/v1/nodes")).json()
        return "default/late" not in await _pods(api) and len(nodes["items"]) == 1

    await eventually(gone, timeout=15)
    metrics = await (await api.client.get("/metrics")).text()
    assert "berth_gateway_requests_total" in metrics
    assert (await api.client.get("/readyz")).status == 200 and (await api.client.get("/healthz")).status == 200


async def test_a_second_create_right_after_the_first_already_exists(api: Api) -> None:
    """The read model follows the log: a create sent right after another of the same name (before
    the projector stored the first) is a 409, not a second object published over the first."""
    for path, doc in (("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "twice"}}),
                      ("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "twice"},
                                         "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10"}}}),
                      ("/apis/scheduling.k8s.io/v1/priorityclasses",
                       {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "twice"},
                        "value": 5})):
        first = await api.client.post(path, json=doc, headers=AUTH)
        again = await api.client.post(path, json=doc, headers=AUTH)
        assert (first.status, again.status) == (201, 409), (path, await again.text())
        assert (await again.json())["reason"] == "AlreadyExists"


async def test_invalid_pod_is_422_and_nothing_is_published(api: Api) -> None:
    body = CLUSTER + "---\n" + BAD_POD
    resp = await api.client.post("/apis/berth.dev/v1/apply", data=body, headers=AUTH)
    assert resp.status == 422
    status = await resp.json()
    assert status["kind"] == "Status" and status["status"] == "Failure" and status["reason"] == "Invalid"
    field, reason = "spec.containers[0].resources.requests[cpu]", status["details"]["reason"]
    assert status["details"] == {"kind": "Pod", "name": "bad", "object": "Pod default/bad", "field": field,
                                 "reason": reason,
                                 "causes": [{"reason": "FieldValueInvalid", "message": reason, "field": field}]}
    single = await api.client.post("/api/v1/namespaces/default/pods", data=BAD_POD, headers=AUTH)
    assert single.status == 422 and (await single.json())["details"]["field"].startswith("spec.containers[0]")
    mismatch = await api.client.post("/api/v1/namespaces/other/pods",
                                     data='{"kind": "Pod", "metadata": {"name": "x", "namespace": "default"}}',
                                     headers=AUTH)
    assert mismatch.status == 422 and (await mismatch.json())["details"]["field"] == "metadata.namespace"
    for topic in ("pods", "nodes"):
        seen = [e async for e in read_topic(api.env.settings, topic, registry=api.env.registry)]
        assert seen == []


async def test_a_server_side_apply_creates_the_pod_its_url_names(api: Api) -> None:
    """Not another pod, nor one named from generateName."""
    applying = {**AUTH, "Content-Type": "application/apply-patch+yaml"}
    other = await api.client.patch("/api/v1/namespaces/default/pods/x", headers=applying,
                                   data="kind: Pod\nmetadata: {name: y}\nspec: {containers: [{name: c}]}\n")
    assert other.status == 422 and "does not match the name on the URL (x)" in (await other.json())["message"]
    generated = await api.client.patch(
        "/api/v1/namespaces/default/pods/x", headers=applying,
        data="kind: Pod\nmetadata: {generateName: job-}\nspec: {containers: [{name: c}]}\n")
    assert generated.status == 201 and (await generated.json())["metadata"]["name"] == "x", await generated.text()


async def test_every_request_needs_a_token_and_writes_the_admin_one(api: Api) -> None:
    # A cookie jar that keeps cookies of an IP address (the test server's 127.0.0.1), as browsers do.
    jar = aiohttp.CookieJar(unsafe=True)
    async with aiohttp.ClientSession(str(api.client.make_url("/")), cookie_jar=jar) as anonymous:
        for path in ("/api/v1/nodes", "/api/v1/pods", "/apis/berth.dev/v1/events", "/apis/berth.dev/v1/overview"):
            resp = await anonymous.get(path)
            assert resp.status == 401 and (await resp.json())["reason"] == "Unauthorized", path
        for path in ("/healthz", "/metrics"):
            assert (await anonymous.get(path)).status == 200, path
        page = await anonymous.get("/ui/", allow_redirects=False)
        assert page.status == 303 and page.headers["Location"] == "/ui/login"
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"},
                        {"Authorization": f"Bearer {TOKEN}x"}):
            resp = await anonymous.post("/apis/berth.dev/v1/apply", data=CLUSTER, headers=headers)
            assert resp.status == 401 and (await resp.json())["reason"] == "Unauthorized"
        viewer = {"Authorization": f"Bearer {VIEWER}"}
        assert (await anonymous.get("/api/v1/nodes", headers=viewer)).status == 200
        for write in (anonymous.post("/apis/berth.dev/v1/apply", data=CLUSTER, headers=viewer),
                      anonymous.delete("/api/v1/nodes/node-a", headers=viewer)):
            resp = await write
            body = await resp.json()
            assert resp.status == 403 and body["reason"] == "Forbidden" and "admin token" in body["message"]
        # The web view's sign-in keeps the token in an HTTP-only cookie the pages then carry.
        refused = await anonymous.post("/ui/login", data={"token": "wrong"}, allow_redirects=False)
        assert refused.status == 401
        signed = await anonymous.post("/ui/login", data={"token": VIEWER}, allow_redirects=False)
        assert signed.status == 303 and "HttpOnly" in signed.headers["Set-Cookie"]
        assert (await anonymous.get("/ui/")).status == 200
        assert (await anonymous.get("/api/v1/nodes")).status == 200
        assert (await anonymous.post("/apis/berth.dev/v1/apply", data=CLUSTER)).status == 403
    seen = [e async for e in read_topic(api.env.settings, "nodes", registry=api.env.registry)]
    assert seen == []


async def test_metrics_can_be_put_behind_a_token(berth_env: BerthTestEnv, engine: AsyncEngine,
                                                 publisher: KafkaPublisher) -> None:
    settings = GatewaySettings(base=berth_env.settings.for_service("gateway"), api_token=TOKEN, metrics_auth=True)
    client = TestClient(TestServer(build_app(settings, publisher, engine, registry=berth_env.registry)))
    await client.start_server()
    try:
        assert (await client.get("/metrics")).status == 401
        assert (await client.get("/metrics", headers=AUTH)).status == 200
        assert (await client.get("/healthz")).status == 200
    finally:
        await client.close()


async def test_an_apply_retried_before_projection_submits_each_pod_once(berth_env: BerthTestEnv, engine: AsyncEngine,
                                                                         publisher: KafkaPublisher) -> None:
    """No projector runs: the read model knows nothing of the first apply, yet its accepted intents
    keep a client's retry (its reply was lost, say) from submitting the pods again. Each apply waits
    for what it published to be readable, and answers without it, with a warning, once its wait is over."""
    settings = GatewaySettings(base=berth_env.settings.for_service("gateway"), api_token=TOKEN,
                               readable_within_s=0.5)
    client = TestClient(TestServer(build_app(settings, publisher, engine, registry=berth_env.registry)))
    await client.start_server()
    try:
        first = await client.post("/apis/berth.dev/v1/apply", data=CLUSTER, headers=AUTH)
        assert (await first.json())["counts"] == {"created": 5}
        assert "reads may not show it yet" in first.headers.get("Warning", "")
        again = await client.post("/apis/berth.dev/v1/apply", data=CLUSTER, headers=AUTH)
        result = await again.json()
        assert {(i["name"], i["action"]) for i in result["items"] if i["kind"] == "Pod"} == {
            ("web-0", "unchanged"), ("web-1", "unchanged")}
    finally:
        await client.close()
    assert len(await AcceptedIntents(engine).unstored()) == 5 + 3, "the retry published the nodes and class again"


async def test_a_pod_created_again_before_projection_already_exists(berth_env: BerthTestEnv, engine: AsyncEngine,
                                                                   publisher: KafkaPublisher) -> None:
    """No projector runs: kubectl's create of a pod, then the same create again, is a 409 as soon as
    the first is accepted, not once the read model shows it. The create waits for its pod to be
    readable, and answers without it, with a warning, once its wait is over."""
    settings = GatewaySettings(base=berth_env.settings.for_service("gateway"), api_token=TOKEN,
                               readable_within_s=0.5)
    client = TestClient(TestServer(build_app(settings, publisher, engine, registry=berth_env.registry)))
    await client.start_server()
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": {"containers": [{"name": "c"}]}}
    try:
        first = await client.post("/api/v1/namespaces/default/pods", json=pod, headers=AUTH)
        assert first.status == 201 and "reads may not show it yet" in first.headers.get("Warning", "")
        again = await client.post("/api/v1/namespaces/default/pods", json=pod, headers=AUTH)
        assert again.status == 409 and (await again.json())["reason"] == "AlreadyExists"
        other = await client.post("/api/v1/namespaces/other/pods", json=pod, headers=AUTH)
        assert other.status == 201, "the same name in another namespace is another pod"
    finally:
        await client.close()
    assert len(await AcceptedIntents(engine).unstored()) == 2


async def test_concurrent_creates_of_one_pod_accept_it_once(berth_env: BerthTestEnv, engine: AsyncEngine,
                                                            publisher: KafkaPublisher) -> None:
    """Creates and applies of one pod sent at once (clients retrying, two users): one is accepted,
    the other creates are 409s and the applies leave it unchanged; the pod is submitted once."""
    settings = GatewaySettings(base=berth_env.settings.for_service("gateway"), api_token=TOKEN,
                               readable_within_s=0.5)  # no projector: the creates are not read back
    client = TestClient(TestServer(build_app(settings, publisher, engine, registry=berth_env.registry)))
    await client.start_server()
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "racer", "namespace": "default"},
           "spec": {"containers": [{"name": "c"}]}}
    try:
        creates = [client.post("/api/v1/namespaces/default/pods", json=pod, headers=AUTH) for _ in range(4)]
        applies = [client.post("/apis/berth.dev/v1/apply", json=pod, headers=AUTH) for _ in range(2)]
        replies = await asyncio.gather(*creates, *applies)
        statuses = sorted(r.status for r in replies[:4])
        actions = [(await r.json())["items"][0]["action"] for r in replies[4:]]
        assert statuses.count(201) + actions.count("created") == 1, (statuses, actions)
        assert statuses.count(409) + actions.count("unchanged") == 5, (statuses, actions)
    finally:
        await client.close()
    assert len(await AcceptedIntents(engine).unstored()) == 1, "the pod was submitted once"


async def test_a_pod_spec_cannot_change_on_reapply(api: Api) -> None:
    assert (await api.client.post("/apis/berth.dev/v1/apply", data=CLUSTER, headers=AUTH)).status == 200

    async def visible() -> bool:
        return len(await _pods(api)) == 2

    await eventually(visible, timeout=15)
    same = await api.client.post("/apis/berth.dev/v1/apply", data=CLUSTER, headers=AUTH)
    assert same.status == 200 and "Warning" not in same.headers
    assert {i["name"]: i["action"] for i in (await same.json())["items"] if i["kind"] == "Pod"} == {
        "web-0": "unchanged", "web-1": "unchanged"}
    changed = await api.client.post("/apis/berth.dev/v1/apply", data=CLUSTER.replace("cpu: 500m", "cpu: 700m"),
                                    headers=AUTH)
    assert changed.status == 422
    message = (await changed.json())["message"]
    assert message.startswith("Pod default/web-0: spec: Forbidden: pod updates may not change fields other than")
    image = await api.client.post("/apis/berth.dev/v1/apply", data=CLUSTER.replace("image: nginx", "image: httpd"),
                                  headers=AUTH)
    assert image.status == 200, "a container's image may change"
    relabelled = await api.client.post(
        "/apis/berth.dev/v1/apply",
        data=CLUSTER.replace("metadata: {name: web-0}", "metadata: {name: web-0, labels: {a: b}}"), headers=AUTH)
    assert relabelled.status == 200
    assert relabelled.headers.getall("Warning") == [
        '299 - "Pod default/web-0: metadata.labels changed; Berth keeps a pod\'s labels as first applied"']
