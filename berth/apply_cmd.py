"""`berth apply -f FILE…`: validate and submit Nodes, Pods, PriorityClasses and PodDisruptionBudgets.

A file goes to the gateway in one request, validated as a whole: all of it is published or none
of it. A file larger than BATCH_BYTES or of more than BATCH_OBJECTS objects (the gateway bounds
both per request) goes in batches: every batch is first validated by the gateway without
publishing anything (`dryRun=All`), then, when all are valid, applied one after another; each batch
carries the file's PriorityClasses, which its pods may name. Large files show an upload progress
line on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterator
from typing import Any

from shared.errors import InvalidInput
from shared.settings import env_int

from .client import (
    EXIT_INVALID_INPUT,
    CliError,
    Gateway,
    add_cluster_args,
    add_validate_arg,
    field_validation,
    find_cluster,
    read_input,
    run_guarded,
)

PROGRESS_FROM_BYTES = 1 << 20
BATCH_BYTES = 8 << 20
"""A file larger than this goes to the gateway in batches of at most about this size
(BERTH_APPLY_BATCH_BYTES; the gateway's body limit, BERTH_GATEWAY_MAX_BODY_BYTES, is 32 MiB)."""
BATCH_OBJECTS = 5000
"""A file of more objects than this goes in batches of at most this many, its PriorityClasses
included (BERTH_APPLY_BATCH_OBJECTS; the gateway's cap, BERTH_GATEWAY_MAX_OBJECTS, is 10,000)."""
MIN_OBJECT_BYTES = 24
"""Fewer bytes than any object takes (`{kind: Node, metadata: {name: a}}` takes 33): a file shorter
than BATCH_OBJECTS of them cannot hold too many and goes as it is, not parsed here."""


RESOURCE = {"PriorityClass": "priorityclass.scheduling.k8s.io", "PodDisruptionBudget": "poddisruptionbudget.policy"}
"""How kubectl names a kind in its lines (its resource and API group); pods and nodes are core."""


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("apply", help="submit objects to the cluster",
                                                description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("-f", "--filename", dest="files", action="append", required=True, metavar="FILE",
                   help="YAML (multi-document) or JSON; repeatable; '-' reads standard input")
    add_validate_arg(p)
    add_cluster_args(p)
    p.set_defaults(run=run_guarded(run))


def batches(body: bytes, source: str, limit: int = BATCH_BYTES, max_objects: int = BATCH_OBJECTS) -> Iterator[bytes]:
    """The file's objects as JSON Lists of at most about `limit` bytes and at most `max_objects`
    objects, each with every PriorityClass."""
    return split(_documents(body, source), source, limit, max_objects)


def split(docs: list[dict[str, Any]], source: str, limit: int, max_objects: int) -> Iterator[bytes]:
    classes = [d for d in docs if d.get("kind") == "PriorityClass"]
    rest = [d for d in docs if d.get("kind") != "PriorityClass"]
    room = max_objects - len(classes)  # every batch carries the classes
    if rest and room < 1:
        raise CliError(f"{source}: {len(classes)} PriorityClasses leave no room for other objects in a batch of "
                       f"{max_objects} (BERTH_APPLY_BATCH_OBJECTS)", EXIT_INVALID_INPUT)
    base = sum(len(json.dumps(c)) + 2 for c in classes)
    chunk: list[dict[str, Any]] = []
    size = base
    for doc in rest:
        encoded = len(json.dumps(doc)) + 2
        if chunk and (size + encoded > limit or len(chunk) >= room):
            yield json.dumps({"apiVersion": "v1", "kind": "List", "items": [*classes, *chunk]}).encode()
            chunk, size = [], base
        chunk.append(doc)
        size += encoded
    if chunk or not rest:
        yield json.dumps({"apiVersion": "v1", "kind": "List", "items": [*classes, *chunk]}).encode()


def _documents(body: bytes, source: str) -> list[dict[str, Any]]:
    from shared.model.loader import decode_text, parse_documents

    try:
        return parse_documents(decode_text(body, source), source)
    except InvalidInput as exc:
        raise CliError(str(exc), EXIT_INVALID_INPUT) from None


def in_batches(body: bytes, source: str, limit: int, max_objects: int) -> list[dict[str, Any]] | None:
    """The file's objects when it must go in batches (more than `limit` bytes or `max_objects`
    objects); None when it goes in one request."""
    if len(body) <= limit and len(body) < max_objects * MIN_OBJECT_BYTES:
        return None  # too short to hold too many objects: the gateway alone parses it
    docs = _documents(body, source)
    return docs if len(body) > limit or len(docs) > max_objects else None


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    gateway = Gateway(find_cluster(args), timeout=600)
    bodies = [(path, read_input(path)) for path in args.files]  # read all first: a missing file sends nothing
    limit = env_int(os.environ, "BERTH_APPLY_BATCH_BYTES", BATCH_BYTES, minimum=1024)
    max_objects = env_int(os.environ, "BERTH_APPLY_BATCH_OBJECTS", BATCH_OBJECTS, minimum=1)
    for path, body in bodies:
        docs = in_batches(body, path, limit, max_objects)
        if docs is not None:
            _apply_in_batches(gateway, args, path, list(split(docs, path, limit, max_objects)))
            continue
        started = time.monotonic()
        bar = tqdm(total=len(body), desc=f"{path}: uploading", unit="B", unit_scale=True, unit_divisor=1024,
                   file=sys.stderr, disable=len(body) < PROGRESS_FROM_BYTES, leave=False)

        def progress(sent: int, total: int) -> None:
            bar.update(sent - bar.n)

        try:
            result = gateway.request("POST", _apply_url(args), body, content_type="application/yaml",
                                     progress=None if bar.disable else progress)
        finally:
            bar.close()
        for item in result["items"]:
            print(_line(item))
        print(f"{path}: {len(result['items'])} objects ({_counted(result['counts'])}); {result['published']} "
              f"events published in {time.monotonic() - started:.2f}s", file=sys.stderr)
    return 0


def _apply_url(args: argparse.Namespace) -> str:
    return f"/apis/berth.dev/v1/apply?fieldValidation={field_validation(args)}"


def _line(item: dict[str, Any]) -> str:
    """kubectl's line for an applied object: pod/web-1 created."""
    return f"{RESOURCE.get(item['kind'], item['kind'].lower())}/{item['name']} {item['action']}"


def _counted(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {action}" for action, n in sorted(counts.items()))


def _apply_in_batches(gateway: Gateway, args: argparse.Namespace, path: str, parts: list[bytes]) -> None:
    from tqdm import tqdm

    started = time.monotonic()
    url = _apply_url(args)
    for part in tqdm(parts, desc=f"{path}: validating", unit="batch", file=sys.stderr, leave=False):
        gateway.request("POST", url + "&dryRun=All", part, content_type="application/json")
    printed: set[tuple[str, str]] = set()
    published = 0
    counts: dict[str, int] = {}
    for part in tqdm(parts, desc=f"{path}: applying", unit="batch", file=sys.stderr, leave=False):
        result = gateway.request("POST", url, part, content_type="application/json")
        published += result["published"]
        for item in result["items"]:
            key = (item["kind"], f"{item.get('namespace', '')}/{item['name']}")
            if key in printed:
                continue  # a PriorityClass every batch carries
            printed.add(key)
            counts[item["action"]] = counts.get(item["action"], 0) + 1
            print(_line(item))
    print(f"{path}: {len(printed)} objects ({_counted(counts)}) in {len(parts)} batches; {published} events published "
          f"in {time.monotonic() - started:.2f}s", file=sys.stderr)
