"""A file too large for one request goes to the gateway in batches: every object once, each batch
about the size asked for, and the file's PriorityClasses in every batch (its pods may name them)."""

from __future__ import annotations

import json

from berth.apply_cmd import batches


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
