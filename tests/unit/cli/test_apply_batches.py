"""A file too large for one request, or of too many objects, goes to the gateway in batches: every
object once, each batch about the size and at most the count asked for, and the file's
PriorityClasses in every batch (its pods may name them)."""

from __future__ import annotations

import json

import pytest

from berth.apply_cmd import batches, in_batches
from berth.client import CliError


def _file(pods: int) -> bytes:
    docs = ["kind: PriorityClass\napiVersion: scheduling.k8s.io/v1\nmetadata: {name: high}\nvalue: 1000\n"]
    docs += [f"kind: Pod\nmetadata: {{name: p{i}}}\nspec: {{priorityClassName: high, containers: [{{name: c}}]}}\n"
             for i in range(pods)]
    return "---\n".join(docs).encode()


def test_every_object_goes_once_in_batches_of_about_the_limit() -> None:
    parts = [json.loads(p) for p in batches(_file(200), "pods.yaml", limit=4096)]
    assert len(parts) > 3
    names = [item["metadata"]["name"] for part in parts for item in part["items"] if item["kind"] == "Pod"]
    assert names == [f"p{i}" for i in range(200)]
    assert all(part["kind"] == "List" for part in parts)
    assert all(len(json.dumps(part)) <= 4096 + 200 for part in parts)


def test_each_batch_carries_the_files_priority_classes() -> None:
    for part in (json.loads(p) for p in batches(_file(50), "pods.yaml", limit=2048)):
        assert part["items"][0]["kind"] == "PriorityClass"


def test_a_file_of_policies_alone_is_one_batch() -> None:
    only = b"kind: PriorityClass\napiVersion: scheduling.k8s.io/v1\nmetadata: {name: high}\nvalue: 1000\n"
    assert len(list(batches(only, "classes.yaml", limit=1024))) == 1


def test_no_batch_holds_more_objects_than_asked_classes_included() -> None:
    parts = [json.loads(p) for p in batches(_file(20), "pods.yaml", limit=1 << 20, max_objects=5)]
    assert [len(part["items"]) for part in parts] == [5, 5, 5, 5, 5]  # the class and 4 pods
    names = [item["metadata"]["name"] for part in parts for item in part["items"] if item["kind"] == "Pod"]
    assert names == [f"p{i}" for i in range(20)]


def test_a_file_goes_whole_unless_too_large_or_of_too_many_objects() -> None:
    assert in_batches(_file(20), "pods.yaml", limit=1 << 20, max_objects=21) is None
    assert len(in_batches(_file(20), "pods.yaml", limit=1 << 20, max_objects=20) or []) == 21
    assert in_batches(_file(20), "pods.yaml", limit=1024, max_objects=1000) is not None


def test_more_classes_than_a_batch_holds_is_refused_before_anything_is_sent() -> None:
    with pytest.raises(CliError, match="leave no room"):
        list(batches(_file(3), "pods.yaml", max_objects=1))
