"""Lists narrowed as the API server narrows them: selectors, then pages in key order."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import pytest
from aiohttp.test_utils import make_mocked_request

from services.gateway.listing import by_time, listed
from shared.errors import InvalidInput


def _pod(ns: str, name: str, node: str = "", labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"metadata": {"namespace": ns, "name": name, "labels": labels or {}},
            "spec": {"nodeName": node}, "status": {"phase": "Running" if node else "Pending"}}


PODS = [_pod("b", "web-2", "n1", {"app": "web"}), _pod("a", "db", "n2", {"app": "db", "tier": "data"}),
        _pod("b", "web-1", "", {"app": "web"}), _pod("a", "cache", "n1")]


def _names(items: list[dict[str, Any]]) -> list[str]:
    return [f"{i['metadata'].get('namespace', '')}/{i['metadata']['name']}" for i in items]


def _list(query: dict[str, str], items: list[dict[str, Any]] = PODS, kind: str = "Pod") -> Any:
    return listed(make_mocked_request("GET", "/api/v1/pods?" + urlencode(query)), kind, items)


def test_a_list_is_in_namespace_and_name_order() -> None:
    page = _list({})
    assert _names(page.items) == ["a/cache", "a/db", "b/web-1", "b/web-2"]
    assert page.continue_token == "" and page.remaining == 0


@pytest.mark.parametrize(("query", "names"), [
    ({"labelSelector": "app=web"}, ["b/web-1", "b/web-2"]),
    ({"labelSelector": "app in (db),tier"}, ["a/db"]),
    ({"labelSelector": "!app"}, ["a/cache"]),
    ({"fieldSelector": "spec.nodeName=n1"}, ["a/cache", "b/web-2"]),
    ({"fieldSelector": "spec.nodeName!=n1,metadata.namespace=b"}, ["b/web-1"]),
    ({"fieldSelector": "spec.nodeName=="}, ["b/web-1"]),  # kubectl's `==`, an empty value: unscheduled
    ({"fieldSelector": "status.phase=Running", "labelSelector": "app=web"}, ["b/web-2"]),
    ({"fieldSelector": "spec.host=n2"}, ["a/db"]),  # old clients' name of spec.nodeName
])
def test_selectors_narrow_the_list(query: dict[str, str], names: list[str]) -> None:
    assert _names(_list(query).items) == names


@pytest.mark.parametrize(("query", "field", "words"), [
    ({"labelSelector": "app in (web"}, "labelSelector", ""),
    ({"fieldSelector": "spec.containers=x"}, "fieldSelector", "field label not supported: spec.containers"),
    ({"limit": "-1"}, "limit", ""),
    ({"continue": "not-a-token"}, "continue", "not a continue token"),
])
def test_a_bad_parameter_is_refused_naming_it(query: dict[str, str], field: str, words: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        _list(query)
    assert refused.value.field == field
    assert words in str(refused.value)


def test_pages_follow_one_another_to_the_end() -> None:
    first = _list({"limit": "3"})
    assert _names(first.items) == ["a/cache", "a/db", "b/web-1"] and first.remaining == 1
    last = _list({"limit": "3", "continue": first.continue_token})
    assert _names(last.items) == ["b/web-2"]
    assert last.continue_token == "" and last.remaining == 0


def test_a_continued_list_reads_the_objects_as_they_are_now() -> None:
    first = _list({"limit": "2"})
    added = [*PODS, _pod("a", "zz"), _pod("a", "aa")]  # "a/aa" sorts before where the page ended
    rest = _list({"continue": first.continue_token}, added)
    assert _names(rest.items) == ["a/zz", "b/web-1", "b/web-2"]


def test_events_are_ordered_by_time_and_select_on_their_object() -> None:
    events = [{"metadata": {"namespace": "a", "name": "e2"}, "lastTimestamp": "2026-01-02T00:00:00Z",
               "involvedObject": {"kind": "Pod", "name": "web"}, "source": {"component": "berth-scheduler"}},
              {"metadata": {"namespace": "a", "name": "e1"}, "lastTimestamp": "2026-01-01T00:00:00Z",
               "involvedObject": {"kind": "Pod", "name": "db"}, "source": {"component": "berth-scheduler"}}]
    request = make_mocked_request("GET", "/api/v1/events")
    assert [e["metadata"]["name"] for e in listed(request, "Event", events, by_time).items] == ["e1", "e2"]
    request = make_mocked_request("GET", "/api/v1/events?" + urlencode(
        {"fieldSelector": "involvedObject.name=web,source=berth-scheduler"}))
    assert [e["metadata"]["name"] for e in listed(request, "Event", events, by_time).items] == ["e2"]


def test_a_boolean_a_pod_leaves_out_is_false() -> None:
    agent = {**_pod("c", "agent", "n2"), "spec": {"nodeName": "n2", "hostNetwork": True}}
    pods = [*PODS, agent]
    assert _names(_list({"fieldSelector": "spec.hostNetwork=true"}, pods).items) == ["c/agent"]
    assert _names(_list({"fieldSelector": "spec.hostNetwork=false"}, pods).items) == [
        "a/cache", "a/db", "b/web-1", "b/web-2"]
    assert _names(_list({"fieldSelector": "spec.hostNetwork!=true"}, pods).items) == [
        "a/cache", "a/db", "b/web-1", "b/web-2"]


def test_pod_ips_are_selectable_and_never_held() -> None:
    assert len(_list({"fieldSelector": "status.podIPs="}).items) == len(PODS)
    assert _list({"fieldSelector": "status.podIPs=10.0.0.1"}).items == []


NODES = [{"metadata": {"name": "n1"}, "spec": {"unschedulable": True}}, {"metadata": {"name": "n2"}, "spec": {}}]


@pytest.mark.parametrize(("kind", "items", "selector", "names"), [
    ("Node", NODES, "spec.unschedulable=true", ["/n1"]),
    ("Node", NODES, "spec.unschedulable=false", ["/n2"]),
    ("Node", NODES, "metadata.name!=n1", ["/n2"]),
    ("Namespace", [{"metadata": {"name": "a"}, "status": {"phase": "Active"}},
                   {"metadata": {"name": "b"}, "status": {"phase": "Terminating"}}], "status.phase=Active", ["/a"]),
    ("PriorityClass", [{"metadata": {"name": "high"}}, {"metadata": {"name": "low"}}], "metadata.name=low", ["/low"]),
])
def test_each_kind_selects_on_the_fields_the_api_server_gives_it(
        kind: str, items: list[dict[str, Any]], selector: str, names: list[str]) -> None:
    assert _names(_list({"fieldSelector": selector}, items, kind).items) == names


@pytest.mark.parametrize(("kind", "path"), [
    ("Pod", "spec.unschedulable"),
    ("Node", "metadata.namespace"),
    ("Node", "spec.nodeName"),
    ("Namespace", "name"),  # selectable upstream in storage, refused by its field label conversion
    ("PriorityClass", "status.phase"),
    ("Event", "spec.nodeName"),
])
def test_a_field_the_kind_has_no_selector_for_is_refused(kind: str, path: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        _list({"fieldSelector": f"{path}=x"}, [], kind)
    assert refused.value.field == "fieldSelector"
    assert f"field label not supported: {path}" in str(refused.value)
