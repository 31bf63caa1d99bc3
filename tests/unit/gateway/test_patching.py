"""PATCH bodies as the API server applies them: merge patch, strategic merge on named lists, JSON
patch and server-side apply, each refusing what it cannot apply with the field it stopped at."""

from __future__ import annotations

import json
from typing import Any

import pytest

from services.gateway.patching import (
    APPLY,
    JSON_PATCH,
    MERGE,
    STRATEGIC,
    UnsupportedPatch,
    apply_patch,
)
from shared.errors import InvalidInput

POD = {"metadata": {"name": "p", "labels": {"a": "1", "b": "2"}},
       "spec": {"containers": [{"name": "c", "image": "x"}, {"name": "d", "image": "y"}],
                "tolerations": [{"key": "k"}]}}


def _patch(patch: object, content_type: str, live: dict[str, Any] | None = None) -> dict[str, Any]:
    body = patch.encode() if isinstance(patch, str) else json.dumps(patch).encode()
    return apply_patch(live or POD, body, content_type, "Pod default/p")


def test_a_merge_patch_merges_objects_removes_nulls_and_replaces_lists() -> None:
    got = _patch({"metadata": {"labels": {"a": None, "c": "3"}}, "spec": {"containers": [{"name": "e"}]}}, MERGE)
    assert got["metadata"] == {"name": "p", "labels": {"b": "2", "c": "3"}}
    assert got["spec"]["containers"] == [{"name": "e"}], "RFC 7386 replaces a list whole"
    assert POD["metadata"]["labels"] == {"a": "1", "b": "2"}, "the live object is not touched"  # type: ignore[index]  # a nested dict


def test_a_strategic_merge_patch_merges_named_items_and_keeps_their_order() -> None:
    got = _patch({"spec": {"$setElementOrder/containers": [{"name": "d"}, {"name": "c"}],
                           "containers": [{"name": "c", "image": "z"}, {"name": "d", "$patch": "delete"}],
                           "tolerations": [{"key": "other"}]}}, STRATEGIC)
    assert got["spec"]["containers"] == [{"name": "c", "image": "z"}]
    assert got["spec"]["tolerations"] == [{"key": "other"}], "a list without a merge key is replaced"
    added = _patch({"spec": {"containers": [{"name": "n", "image": "i"}]}}, STRATEGIC)
    assert [c["name"] for c in added["spec"]["containers"]] == ["c", "d", "n"]


def test_server_side_apply_merges_the_applied_configuration() -> None:
    got = _patch("metadata:\n  name: p\n  labels: {z: '9'}\n", APPLY)
    assert got["metadata"]["labels"] == {"a": "1", "b": "2", "z": "9"}


def test_a_json_patch_runs_each_operation_in_order() -> None:
    got = _patch([{"op": "replace", "path": "/metadata/labels/a", "value": "x"},
                  {"op": "add", "path": "/spec/containers/-", "value": {"name": "e"}},
                  {"op": "remove", "path": "/spec/tolerations/0"},
                  {"op": "move", "from": "/metadata/labels/b", "path": "/metadata/labels/m"},
                  {"op": "test", "path": "/metadata/labels/m", "value": "2"}], JSON_PATCH)
    assert got["metadata"]["labels"] == {"a": "x", "m": "2"}
    assert [c["name"] for c in got["spec"]["containers"]] == ["c", "d", "e"]
    assert got["spec"]["tolerations"] == []


@pytest.mark.parametrize(("patch", "content_type", "message"), [
    ([{"op": "replace", "path": "/spec/nodeName", "value": "n"}], JSON_PATCH, "no such path: /spec/nodeName"),
    ([{"op": "test", "path": "/metadata/name", "value": "q"}], JSON_PATCH, "test failed at /metadata/name"),
    ("{not json", MERGE, "not valid JSON"),
    ([1, 2], MERGE, "expected an object"),
])
def test_a_patch_that_cannot_apply_says_where(patch: object, content_type: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        _patch(patch, content_type)


def test_an_unknown_patch_type_is_refused() -> None:
    with pytest.raises(UnsupportedPatch, match="application/xml"):
        _patch({}, "application/xml")


def test_a_json_patch_refuses_negative_and_out_of_range_indices() -> None:
    for path in ("/spec/containers/-1", "/spec/containers/5"):
        with pytest.raises(InvalidInput, match="out of range"):
            _patch([{"op": "remove", "path": path}], JSON_PATCH)
    with pytest.raises(InvalidInput, match="out of range"):
        _patch([{"op": "add", "path": "/spec/containers/3", "value": {}}], JSON_PATCH)


def test_taints_are_replaced_whole_as_upstream_does() -> None:
    node = {"spec": {"taints": [{"key": "a", "effect": "NoSchedule"}, {"key": "b", "effect": "NoSchedule"}]}}
    got = _patch({"spec": {"taints": [{"key": "b", "effect": "NoSchedule"}]}}, STRATEGIC, node)
    assert got["spec"]["taints"] == [{"key": "b", "effect": "NoSchedule"}], "kubectl taint a- removes a"
