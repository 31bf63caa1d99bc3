"""Lists narrowed as the API server narrows them: selectors, then pages in key order."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import pytest
from aiohttp.test_utils import make_mocked_request

from services.gateway.listing import EVENT_FIELD_PATHS, by_time, listed
from shared.errors import InvalidInput


def _pod(ns: str, name: str, node: str = "", labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"metadata": {"namespace": ns, "name": name, "labels": labels or {}},
            "spec": {"nodeName": node, "hostNetwork": False}, "status": {"phase": "Running" if node else "Pending"}}


PODS = [_pod("b", "web-2", "n1", {"app": "web"}), _pod("a", "db", "n2", {"app": "db", "tier": "data"}),
        _pod("b", "web-1", "", {"app": "web"}), _pod("a", "cache", "n1")]


def _names(items: list[dict[str, Any]]) -> list[str]:
    return [f"{i['metadata']['namespace']}/{i['metadata']['name']}" for i in items]


def _list(query: dict[str, str], items: list[dict[str, Any]] = PODS) -> Any:
    return listed(make_mocked_request("GET", "/api/v1/pods?" + urlencode(query)), items)


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
    ({"fieldSelector": "spec.hostNetwork=false"}, ["a/cache", "a/db", "b/web-1", "b/web-2"]),
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
    assert [e["metadata"]["name"] for e in listed(request, events, EVENT_FIELD_PATHS, by_time).items] == ["e1", "e2"]
    request = make_mocked_request("GET", "/api/v1/events?" + urlencode(
        {"fieldSelector": "involvedObject.name=web,source=berth-scheduler"}))
    assert [e["metadata"]["name"] for e in listed(request, events, EVENT_FIELD_PATHS, by_time).items] == ["e2"]
