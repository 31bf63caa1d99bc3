"""Watches over the event store: a watch from resourceVersion R sees every change after R exactly
once, in order, and resumes on a restarted gateway where the last one left off."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from sqlalchemy.ext.asyncio import AsyncEngine

from services.gateway.app import build_app
from services.gateway.settings import GatewaySettings
from services.projector.app import build as build_projector
from services.projector.settings import ProjectorSettings
from shared.adapters.kafka import KafkaPublisher

from .fixtures import BerthTestEnv

TOKEN = "s3cret"
AUTH = {"Authorization": f"Bearer {TOKEN}"}

pytestmark = pytest.mark.integration


def _pod(name: str, labels: str = "{}") -> str:
    return f"kind: Pod\nmetadata: {{name: {name}, labels: {labels}}}\nspec: {{containers: [{{name: c}}]}}\n"


async def _apply(client: TestClient, text: str) -> None:
    resp = await client.post("/apis/berth.dev/v1/apply", data=text, headers=AUTH)
    assert resp.status == 200, await resp.text()


async def _list_version(client: TestClient, path: str) -> str:
    resp = await client.get(path)
    assert resp.status == 200
    return str((await resp.json())["metadata"]["resourceVersion"])


async def _watch(client: TestClient, query: str, count: int, timeout: float = 20) -> list[dict[str, Any]]:
    """The first `count` events of a watch of pods (bookmarks left out)."""
    events: list[dict[str, Any]] = []
    async with client.get(f"/api/v1/pods?watch=true&{query}") as resp:
        assert resp.status == 200, await resp.text()

        async def read() -> None:
            while len(events) < count:
                line = await resp.content.readline()
                assert line, f"the watch ended after {events}"
                event = json.loads(line)
                if event["type"] != "BOOKMARK":
                    events.append(event)

        await asyncio.wait_for(read(), timeout)
    return events


def _seen(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(e["type"], e["object"]["metadata"]["name"]) for e in events]


async def _read_when(client: TestClient, path: str, ready: Callable[[int, Any], bool]) -> Any:
    """GET `path` until `ready(status, body)` (reads follow the log); the body it was ready with."""
    for _ in range(300):
        resp = await client.get(path)
        body = await resp.json()
        if ready(resp.status, body):
            return body
        await asyncio.sleep(0.05)
    raise AssertionError(f"{path} never became ready")


async def _wait_listed(client: TestClient, names: set[str]) -> None:
    for _ in range(300):
        resp = await client.get("/api/v1/pods")
        if {p["metadata"]["name"] for p in (await resp.json())["items"]} == names:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"pods never became {names}")


@dataclass
class Gateways:
    """Gateways on one store, with the projector running: `start` makes a new one, as a restart does."""

    env: BerthTestEnv
    engine: AsyncEngine
    publisher: KafkaPublisher

    async def start(self) -> TestClient:
        settings = GatewaySettings(base=self.env.settings.for_service("gateway"), api_token=TOKEN)
        client = TestClient(TestServer(build_app(settings, self.publisher, self.engine, registry=self.env.registry)),
                            headers=AUTH)
        await client.start_server()
        return client


@pytest.fixture
async def gateways(berth_env: BerthTestEnv, engine: AsyncEngine,
                   publisher: KafkaPublisher) -> AsyncIterator[Gateways]:
    projector = build_projector(ProjectorSettings(base=berth_env.settings.for_service("projector")), engine,
                                registry=berth_env.registry, serve_http=False)
    task = asyncio.create_task(projector.run())
    try:
        yield Gateways(berth_env, engine, publisher)
    finally:
        projector.request_stop()
        await asyncio.wait_for(task, 10)


async def test_a_watch_resumes_across_a_gateway_restart_seeing_each_change_once(gateways: Gateways) -> None:
    client = await gateways.start()
    try:
        await _apply(client, _pod("a") + "---\n" + _pod("b"))
        await _wait_listed(client, {"a", "b"})
        start = await _list_version(client, "/api/v1/pods")
        await _apply(client, _pod("c"))
        assert (await client.delete("/api/v1/namespaces/default/pods/a")).status == 200
        first = await _watch(client, f"resourceVersion={start}", 2)
    finally:
        await client.close()
    # Pods of different partitions are stored in whichever order the projector took them.
    assert sorted(_seen(first)) == [("ADDED", "c"), ("DELETED", "a")]
    versions = [int(e["object"]["metadata"]["resourceVersion"]) for e in first]
    assert versions == sorted(versions) and versions[0] > int(start)

    restarted = await gateways.start()
    try:
        await _apply(restarted, _pod("d"))
        resumed = await _watch(restarted, f"resourceVersion={versions[-1]}", 1)
        assert _seen(resumed) == [("ADDED", "d")]
        whole = await _watch(restarted, f"resourceVersion={start}", 3)
        assert _seen(whole) == _seen(first) + _seen(resumed), "the same changes, once each, in order"
        assert [e["object"]["metadata"]["resourceVersion"] for e in whole] == [
            e["object"]["metadata"]["resourceVersion"] for e in first + resumed]
    finally:
        await restarted.close()


async def test_a_watch_without_a_version_starts_with_every_object_and_follows_its_selector(
        gateways: Gateways) -> None:
    client = await gateways.start()
    try:
        await _apply(client, _pod("x", "{app: web}") + "---\n" + _pod("y", "{app: db}"))
        await _wait_listed(client, {"x", "y"})
        initial = await _watch(client, "labelSelector=app%3Dweb", 1)
        assert _seen(initial) == [("ADDED", "x")], "only what the selector selects"
        # includeObject shapes Table rows alone: a plain watch leaves it, as a plain list does.
        assert _seen(await _watch(client, "labelSelector=app%3Dweb&includeObject=Whatever", 1)) == [("ADDED", "x")]
        bad = await client.get("/api/v1/pods?watch=true&fieldSelector=spec.color%3Dred")
        assert bad.status == 400 and "field label not supported: spec.color" in (await bad.json())["message"]
        refused = await client.get("/api/v1/events?watch=true")
        assert refused.status == 405 and (await refused.json())["reason"] == "MethodNotAllowed"
    finally:
        await client.close()


async def test_a_list_pages_with_limit_and_continue_in_key_order(gateways: Gateways) -> None:
    client = await gateways.start()
    try:
        await _apply(client, "---\n".join(_pod(n) for n in ("e", "b", "d", "a", "c")))
        await _wait_listed(client, {"a", "b", "c", "d", "e"})
        names, token, remaining = [], "", []
        while True:
            resp = await client.get("/api/v1/pods", params={"limit": "2", **({"continue": token} if token else {})})
            body = await resp.json()
            names += [p["metadata"]["name"] for p in body["items"]]
            token = body["metadata"].get("continue", "")
            remaining.append(body["metadata"].get("remainingItemCount"))
            if not token:
                break
        assert names == ["a", "b", "c", "d", "e"] and remaining == [3, 1, None]
        forged = await client.get("/api/v1/pods", params={"limit": "2", "continue": "not-a-token"})
        assert forged.status == 422 and (await forged.json())["details"]["field"] == "continue"
    finally:
        await client.close()


async def test_a_deletion_before_the_watch_began_is_still_seen_from_an_earlier_version(gateways: Gateways) -> None:
    """`kubectl delete --wait` lists, then watches from the list's version: an object deleted in
    between must still come as DELETED, though the watch never read it."""
    client = await gateways.start()
    try:
        await _apply(client, "kind: Node\nmetadata: {name: gone}\nstatus: {allocatable: {cpu: '1'}}\n")
        await _read_when(client, "/api/v1/nodes/gone", lambda status, _: status == 200)
        version = await _list_version(client, "/api/v1/nodes")
        assert (await client.delete("/api/v1/nodes/gone")).status == 200
        await _read_when(client, "/api/v1/nodes/gone", lambda status, _: status == 404)
        async with client.get("/api/v1/nodes", params={"watch": "true", "resourceVersion": version,
                                                       "fieldSelector": "metadata.name=gone"}) as resp:
            event = json.loads(await asyncio.wait_for(resp.content.readline(), 10))
        assert (event["type"], event["object"]["metadata"]["name"]) == ("DELETED", "gone")
    finally:
        await client.close()


async def test_an_object_keeps_the_creation_time_it_was_first_given(gateways: Gateways) -> None:
    client = await gateways.start()
    try:
        node = "kind: Node\nmetadata: {{name: aged, labels: {{tier: {tier}}}}}\nstatus: {{allocatable: {{cpu: '1'}}}}\n"
        await _apply(client, node.format(tier="silver"))
        first = (await _read_when(client, "/api/v1/nodes/aged",
                                  lambda status, _: status == 200))["metadata"]["creationTimestamp"]
        assert first, "the node shows with its creation time"
        await asyncio.sleep(1.1)  # timestamps are to the second
        await _apply(client, node.format(tier="gold"))
        body = await _read_when(client, "/api/v1/nodes/aged",
                                lambda _, node: node["metadata"]["labels"]["tier"] == "gold")
        assert body["metadata"]["creationTimestamp"] == first, "an update is no new creation"
    finally:
        await client.close()


async def test_a_write_from_a_stale_version_is_refused_with_conflict(gateways: Gateways) -> None:
    client = await gateways.start()
    try:
        await _apply(client, "kind: Node\nmetadata: {name: v}\nstatus: {allocatable: {cpu: '1'}}\n")
        node = await _read_when(client, "/api/v1/nodes/v", lambda status, _: status == 200)
        first = node["metadata"]["resourceVersion"]
        listed = await (await client.get("/api/v1/nodes")).json()
        assert [n["metadata"]["resourceVersion"] for n in listed["items"]] == [first], "the same in a list"

        relabel = {"metadata": {"labels": {"tier": "gold"}, "resourceVersion": first}}
        resp = await client.patch("/api/v1/nodes/v", json=relabel,
                                  headers={"Content-Type": "application/merge-patch+json"})
        assert resp.status == 200, await resp.text()
        now = await _read_when(client, "/api/v1/nodes/v", lambda _, n: n["metadata"]["resourceVersion"] != first)
        assert now["metadata"]["labels"]["tier"] == "gold" and int(now["metadata"]["resourceVersion"]) > int(first)

        stale = await client.put("/api/v1/nodes/v", json={**node, "kind": "Node", "apiVersion": "v1"})
        status = await stale.json()
        assert stale.status == 409 and status["reason"] == "Conflict"
        assert status["message"] == ('Operation cannot be fulfilled on nodes "v": the object has been modified; '
                                     "please apply your changes to the latest version and try again")
        again = await client.patch("/api/v1/nodes/v", json=relabel,
                                   headers={"Content-Type": "application/merge-patch+json"})
        assert again.status == 409
        fresh = await client.put("/api/v1/nodes/v", json={**now, "kind": "Node", "apiVersion": "v1"})
        assert fresh.status == 200, await fresh.text()
    finally:
        await client.close()


async def test_two_quick_patches_of_a_node_both_hold(gateways: Gateways) -> None:
    """`kubectl cordon` then at once `kubectl label`: the second reads the first's result, not the
    object as it was before it (the read model follows the log)."""
    client = await gateways.start()
    try:
        await _apply(client, "kind: Node\nmetadata: {name: q}\nstatus: {allocatable: {cpu: '1'}}\n")
        await _read_when(client, "/api/v1/nodes/q", lambda status, _: status == 200)
        merge = {"Content-Type": "application/merge-patch+json"}
        cordon = await client.patch("/api/v1/nodes/q", json={"spec": {"unschedulable": True}}, headers=merge)
        label = await client.patch("/api/v1/nodes/q", json={"metadata": {"labels": {"x": "y"}}}, headers=merge)
        assert (cordon.status, label.status) == (200, 200)
        body = await label.json()
        assert body["spec"].get("unschedulable") is True and body["metadata"]["labels"]["x"] == "y"
    finally:
        await client.close()


async def test_priority_classes_namespaces_and_budgets_are_watched_as_their_events_left_them(
        gateways: Gateways) -> None:
    client = await gateways.start()
    try:
        await _apply(client, _pod("first"))  # a version to start from: "0" would mean "from now"
        await _wait_listed(client, {"first"})
        start = await _list_version(client, "/apis/scheduling.k8s.io/v1/priorityclasses")
        await _apply(client, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: hi}\n"
                             "value: 10\n---\nkind: Namespace\nmetadata: {name: team, labels: {a: b}}\n"
                             "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\n"
                             "metadata: {name: web, namespace: team}\nspec: {minAvailable: 1}\n")
        for path in ("/apis/scheduling.k8s.io/v1/priorityclasses/hi", "/api/v1/namespaces/team",
                     "/apis/policy/v1/namespaces/team/poddisruptionbudgets/web"):
            await _read_when(client, path, lambda status, _: status == 200)
        assert (await client.delete("/apis/scheduling.k8s.io/v1/priorityclasses/hi")).status == 200

        async def events(path: str, count: int, **query: str) -> list[tuple[str, str]]:
            async with client.get(path, params={"watch": "true", "resourceVersion": start, **query}) as resp:
                assert resp.status == 200, await resp.text()
                got: list[tuple[str, str]] = []
                while len(got) < count:
                    event = json.loads(await asyncio.wait_for(resp.content.readline(), 10))
                    got.append((event["type"], event["object"]["metadata"]["name"]))
                return got

        assert await events("/apis/scheduling.k8s.io/v1/priorityclasses", 2) == [("ADDED", "hi"), ("DELETED", "hi")]
        assert await events("/api/v1/namespaces", 1) == [("ADDED", "team")]
        # As the list shows it: Active, so a selector on its phase keeps it.
        assert await events("/api/v1/namespaces", 1, fieldSelector="status.phase=Active") == [("ADDED", "team")]
        assert await events("/apis/policy/v1/namespaces/team/poddisruptionbudgets", 1) == [("ADDED", "web")]
    finally:
        await client.close()


async def test_a_namespaced_watch_sees_its_namespace_alone(gateways: Gateways) -> None:
    client = await gateways.start()
    try:
        await _apply(client, _pod("before"))
        await _wait_listed(client, {"before"})
        start = await _list_version(client, "/api/v1/pods")
        await _apply(client, _pod("here").replace("{name: here,", "{name: here, namespace: prod,") + "---\n"
                     + _pod("elsewhere"))
        async with client.get("/api/v1/namespaces/prod/pods", params={"watch": "true", "resourceVersion": start,
                                                                        "timeoutSeconds": "3"}) as resp:
            lines = [json.loads(line) for line in (await resp.read()).splitlines() if line]
        assert [(e["type"], e["object"]["metadata"]["name"]) for e in lines if e["type"] != "BOOKMARK"] == [
            ("ADDED", "here")]
    finally:
        await client.close()
