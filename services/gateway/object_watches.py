"""Watches of the kinds that change by upsert and delete events (namespaces, PriorityClasses,
budgets): each event names its object by the key versions.py uses, and an upsert holds the whole
object, so every change is sent as the event left it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from shared.events import payload_from_builtins

from . import objects, versions
from .discovery import group_version_of
from .watch import Watched

FIELDS = {"Namespace": "namespace", "PriorityClass": "priority_class", "PodDisruptionBudget": "pdb"}
"""The field of each kind's upsert event that holds the object."""


def _key_of(kind: str, item: dict[str, Any]) -> str:
    meta = item.get("metadata") or {}
    return versions.event_key(kind, str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def upserted_kind(kind: str, read_all: Callable[[], Awaitable[list[dict[str, Any]]]]) -> Watched:
    """The Watched of `kind`, its objects read by `read_all` (rendered as the API shows them)."""
    upserted, deleted = versions.CHANGES[kind]
    api_version = group_version_of(kind)

    def key(event_type: str, payload: dict[str, Any]) -> str:
        if event_type == upserted:
            return _key_of(kind, payload[FIELDS[kind]])
        return versions.event_key(kind, str(payload.get("namespace") or ""), str(payload["name"]))

    async def everything() -> dict[str, dict[str, Any]]:
        return {_key_of(kind, i): i for i in await read_all()}

    async def load(keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        wanted = set(keys)
        return {k: i for k, i in (await everything()).items() if k in wanted}

    def stub(key: str) -> dict[str, Any]:
        parts = key.split("/")
        return {"name": parts[-1], **({"namespace": parts[-2]} if len(parts) == 3 else {})}

    def at_change(event_type: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        if event_type != upserted:
            return None
        event = payload_from_builtins(payload, type_name=event_type)
        return objects.render_object(getattr(event, FIELDS[kind]), api_version, kind)

    return Watched(kind, api_version, {upserted: "ADDED", deleted: "DELETED"}, key, load, everything, stub,
                   at_change=at_change)
