"""Each object's resourceVersion: the event store's seq of its last change, and the optimistic
concurrency it gives writes, as the API server's.

Nodes, namespaces, PriorityClasses and budgets change by their upsert and delete events, keyed by
the object; the latest such event's seq is the object's version (the one a watch stamps on that
change). A write that carries `metadata.resourceVersion` applies only while it is still the
object's version; otherwise it is refused with Conflict, in the API server's words. Pods carry no
version of their own: they do not change once submitted.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from shared.errors import Conflict
from shared.ports import EventStoreReader

CHANGES = {
    "Node": ("NodeUpserted", "NodeDeleted"),
    "Namespace": ("NamespaceUpserted", "NamespaceDeleted"),
    "PriorityClass": ("PriorityClassUpserted", "PriorityClassDeleted"),
    "PodDisruptionBudget": ("PodDisruptionBudgetUpserted", "PodDisruptionBudgetDeleted"),
}
RESOURCES = {"Node": "nodes", "Namespace": "namespaces", "PriorityClass": "priorityclasses",
             "PodDisruptionBudget": "poddisruptionbudgets"}


class StaleVersion(Conflict):
    def __init__(self, kind: str, name: str) -> None:
        self.kind, self.name = RESOURCES[kind], name
        super().__init__(f'Operation cannot be fulfilled on {RESOURCES[kind]} "{name}": the object has been '
                         "modified; please apply your changes to the latest version and try again")


def event_key(kind: str, namespace: str, name: str) -> str:
    """The key its events carry (their partition key)."""
    if kind == "Node":
        return name
    if kind == "PodDisruptionBudget":
        return f"pdb/{namespace}/{name}"
    return f"{kind.lower()}/{name}"


def _coordinates(item: dict[str, Any]) -> tuple[str, str]:
    meta = item.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


Versions = dict[str, int]


async def read(store: EventStoreReader, kind: str, names: Iterable[tuple[str, str]] | None = None) -> Versions:
    """The versions of `kind`'s objects (those named, as (namespace, name), or all). Read before the
    objects themselves: an object then is never older than its version, so a write from it is at
    worst refused (and retried), never applied over a change it did not see."""
    if kind not in CHANGES:
        return {}
    keys = None if names is None else [event_key(kind, ns, name) for ns, name in names]
    return await store.versions(keys, CHANGES[kind])


async def stamped(store: EventStoreReader, kind: str, items: Iterable[dict[str, Any]],
                  found: Versions) -> list[dict[str, Any]]:
    """`items` with their resourceVersion, `found` read before them. An object stored between the
    two reads has no version in `found` (its event and its row are committed together, after the
    versions were read): it gets the version of its creation, which its row is at least as new as
    (a later version read now could be newer than the row), so a stored object never shows
    version 0 and a write from it is at worst refused."""
    items = list(items)
    if kind in CHANGES:
        missing = [event_key(kind, *c) for c in map(_coordinates, items)]
        missing = [k for k in missing if k not in found]
        if missing:
            found = {**found, **await store.created_at(missing, CHANGES[kind][:1])}
    return stamp(kind, items, found)


def stamp(kind: str, items: Iterable[dict[str, Any]], found: Versions) -> list[dict[str, Any]]:
    """`items` with their resourceVersion from `found` (kinds without versions pass unchanged)."""
    if kind not in CHANGES:
        return list(items)
    return [{**i, "metadata": {**(i.get("metadata") or {}),
                               "resourceVersion": str(found.get(event_key(kind, *_coordinates(i)), 0))}}
            for i in items]


def check(kind: str, live: dict[str, Any], submitted: dict[str, Any]) -> None:
    """Refuse a write whose resourceVersion is not the live object's (none given: no precondition)."""
    given = str((submitted.get("metadata") or {}).get("resourceVersion") or "")
    current = str((live.get("metadata") or {}).get("resourceVersion") or "")
    if given and given != current:
        raise StaleVersion(kind, _coordinates(live)[1])
