"""What kubectl reads from the gateway besides objects: discovery, the Table form, and the rules
that turn stored changes into watch events."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from services.gateway import discovery, tables
from services.gateway.watch import GAP_WAIT_S, Selection, stable
from shared.errors import InvalidInput

NOW = datetime(2026, 1, 1, tzinfo=UTC)




def _pod(**status: object) -> dict[str, object]:
    created = (NOW - timedelta(seconds=75)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"metadata": {"name": "web", "namespace": "prod", "creationTimestamp": created, "labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c"}, {"name": "d"}], "nodeName": status.pop("node", None)},
            "status": status}


def test_a_pod_row_has_kubectls_columns_and_its_metadata() -> None:
    got = tables.table("Pod", [_pod(phase="Pending", nominatedNodeName="n2")], NOW, resource_version="7")
    assert [c["name"] for c in got["columnDefinitions"] if c["priority"] == 0] == [
        "Name", "Ready", "Status", "Restarts", "Age"]
    [row] = got["rows"]
    assert row["cells"] == ["web", "0/2", "Pending", "0", "75s", "<none>", "<none>", "n2", "<none>"]
    assert row["object"]["metadata"]["namespace"] == "prod", "kubectl -A reads the namespace here"
    assert got["metadata"]["resourceVersion"] == "7"
    refused = tables.table("Pod", [_pod(phase="Failed", reason="OutOfcpu", node="n1")], NOW)["rows"][0]["cells"]
    assert refused[2] == "OutOfcpu" and refused[6] == "n1"


def test_rows_carry_the_object_as_include_object_asks() -> None:
    pod = _pod(phase="Pending")
    assert tables.table("Pod", [pod], NOW)["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    # kubectl get --sort-by asks for the whole object, and sorts the rows by a field of it.
    whole = tables.include_object({"includeObject": "Object"})
    assert tables.table("Pod", [pod], NOW, include=whole)["rows"][0]["object"] is pod
    assert "object" not in tables.table("Pod", [pod], NOW, include=tables.include_object({"includeObject": "None"}))[
        "rows"][0]
    assert tables.include_object({}) == "Metadata"
    with pytest.raises(InvalidInput, match="includeObject: unsupported value 'All': Metadata, Object, None"):
        tables.include_object({"includeObject": "All"})


def test_a_node_row_shows_its_readiness_cordon_and_roles() -> None:
    node = {"metadata": {"name": "n1", "labels": {"node-role.kubernetes.io/control-plane": "",
                                                   "node-role.kubernetes.io/worker": ""}},
            "spec": {"unschedulable": True}, "status": {"nodeInfo": {"kubeletVersion": "v1.34.0"}}}
    cells = tables.table("Node", [node], NOW)["rows"][0]["cells"]
    assert cells[:5] == ["n1", "Ready,SchedulingDisabled", "control-plane,worker", "<unknown>", "v1.34.0"]


def test_only_a_table_accept_header_asks_for_one() -> None:
    assert tables.wants_table("application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
    assert not tables.wants_table("application/json")


def test_discovery_lists_what_the_gateway_serves() -> None:
    core = discovery.resource_list("", "v1")
    assert core is not None and {r["name"] for r in core["resources"]} == {
        "pods", "nodes", "namespaces", "events", "services", "pods/binding", "pods/status", "nodes/status"}
    pods = next(r for r in core["resources"] if r["name"] == "pods")
    assert pods["namespaced"] and pods["shortNames"] == ["po"] and pods["categories"] == ["all"]
    services = next(r for r in core["resources"] if r["name"] == "services")
    assert services["verbs"] == ["get", "list"], "listed for kubectl cluster-info, never written"
    groups = {g["name"]: g["preferredVersion"]["groupVersion"] for g in discovery.api_group_list()["groups"]}
    assert groups == {"scheduling.k8s.io": "scheduling.k8s.io/v1", "policy": "policy/v1",
                      "authorization.k8s.io": "authorization.k8s.io/v1"}  # kubectl auth can-i's reviews
    reviews = discovery.resource_list("authorization.k8s.io", "v1")
    assert reviews is not None and {r["name"]: r["verbs"] for r in reviews["resources"]} == {
        "selfsubjectaccessreviews": ["create"], "selfsubjectrulesreviews": ["create"]}
    assert discovery.resource_list("policy", "v1beta1") is None


def test_a_watch_waits_at_a_gap_until_it_has_stayed_open_long_enough() -> None:
    rows: list[tuple[int, str, dict[str, object]]] = [(11, "A", {}), (12, "A", {}), (14, "A", {})]
    gaps: dict[int, float] = {}
    assert stable(rows, 10, gaps, now=100.0) == rows[:2], "seq 13 may still be committing"
    assert stable(rows[2:], 12, gaps, now=100.0 + GAP_WAIT_S / 2) == []
    assert stable(rows[2:], 12, gaps, now=100.0 + GAP_WAIT_S) == rows[2:], "a seq left unused for good"
    assert gaps == {}


def test_a_selection_turns_changes_into_the_events_its_watcher_should_see() -> None:
    selection = Selection(lambda obj: obj.get("app") == "web")
    assert selection.event("u", "ADDED", {"app": "db"}) is None
    assert selection.event("u", "MODIFIED", {"app": "web"}) == "ADDED", "it starts matching"
    assert selection.event("u", "MODIFIED", {"app": "web"}) == "MODIFIED"
    assert selection.event("u", "MODIFIED", {"app": "db"}) == "DELETED", "it stops matching"
    assert selection.event("u", "DELETED", {"app": "db"}) is None, "already gone for this watcher"


def test_aggregated_discovery_holds_every_version_and_resource_at_once() -> None:
    assert discovery.wants_aggregated("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
                                      "application/json")
    assert not discovery.wants_aggregated("application/json")
    [core] = discovery.aggregated(core=True)["items"]
    [v1] = core["versions"]
    pods = next(r for r in v1["resources"] if r["resource"] == "pods")
    assert pods["scope"] == "Namespaced" and pods["responseKind"] == {"group": "", "version": "v1", "kind": "Pod"}
    assert {s["subresource"] for s in pods["subresources"]} == {"binding", "status"}
    named = {g["metadata"]["name"] for g in discovery.aggregated(core=False)["items"]}
    assert named == {"scheduling.k8s.io", "policy", "authorization.k8s.io"}


def test_the_swagger_document_speaks_openapi_v2() -> None:
    import json

    from services.gateway import openapi

    doc = json.loads(openapi.swagger())
    assert doc["swagger"] == "2.0" and "components" not in json.dumps(doc)
    spec = doc["definitions"]["io.k8s.api.core.v1.Pod"]["properties"]["spec"]
    assert spec == {"$ref": "#/definitions/io.k8s.api.core.v1.PodSpec"}
    patch = doc["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"]
    assert {"name": "fieldValidation", "in": "query", "type": "string", "uniqueItems": True} in patch["parameters"]
    gvk = doc["definitions"]["io.k8s.api.policy.v1.PodDisruptionBudget"]["x-kubernetes-group-version-kind"]
    assert gvk == [{"group": "policy", "version": "v1", "kind": "PodDisruptionBudget"}]


async def test_unknown_openapi_keys_never_reach_the_documents_cache() -> None:
    from aiohttp import web
    from aiohttp.test_utils import TestClient, TestServer

    from services.gateway import openapi

    app = web.Application()
    openapi.install(app)
    async with TestClient(TestServer(app)) as client:
        assert (await client.get("/openapi/v3/api/v1")).status == 200
        before = openapi.document.cache_info().currsize
        for i in range(20):
            await client.get(f"/openapi/v3/apis/junk{i}/v1")  # NotFound (a 404 behind the gateway's middleware)
        assert openapi.document.cache_info().currsize == before
