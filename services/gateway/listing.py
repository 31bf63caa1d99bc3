"""Lists narrowed as the API server narrows them: `labelSelector`, `fieldSelector` on the fields it
indexes, and pages of `limit` items that `continue` resumes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from shared.errors import InvalidInput
from shared.model.selectors import parse_selector

from . import pagination
from .params import whole_number


def selection(request: web.Request, field_paths: tuple[str, ...] | None = None
              ) -> Callable[[dict[str, Any]], bool]:
    """What `labelSelector` (kubectl's -l syntax) and `fieldSelector` (spec.nodeName=n1 and the
    like) select, checked once: a bad selector is refused before anything is read."""
    text = request.query.get("labelSelector", "")
    try:
        selector = parse_selector(text) if text else None
    except ValueError as exc:
        raise InvalidInput("request", "labelSelector", str(exc)) from None
    fields = _field_terms(request.query.get("fieldSelector", ""), field_paths or FIELD_PATHS)

    def matches(item: dict[str, Any]) -> bool:
        if selector is not None and not selector.matches((item.get("metadata") or {}).get("labels") or {}):
            return False
        return all((_field(item, path) == value) != negate for path, value, negate in fields)

    return matches


def by_key(item: dict[str, Any]) -> tuple[str, ...]:
    """Namespace, then name: the API server's order of a list."""
    meta = item.get("metadata") or {}
    return (str(meta.get("namespace", "")), str(meta.get("name", "")))


def by_time(item: dict[str, Any]) -> tuple[str, ...]:
    """An event's last time, then its key: the order kubectl shows events in."""
    return (str(item.get("lastTimestamp", "")), *by_key(item))


@dataclass(frozen=True, slots=True)
class Page:
    items: list[dict[str, Any]]
    continue_token: str = ""
    remaining: int = 0


def listed(request: web.Request, items: list[dict[str, Any]], field_paths: tuple[str, ...] | None = None,
           order: Callable[[dict[str, Any]], tuple[str, ...]] = by_key) -> Page:
    """A list narrowed as the API server narrows one: the selectors, then a page of `limit` items in
    `order` (namespace and name unless told) from where `continue` left off. A continued list reads
    the objects as they are now (the API server would serve the first page's snapshot), after the
    last one already sent."""
    matches = selection(request, field_paths)
    items = sorted((i for i in items if matches(i)), key=order)
    token = request.query.get("continue", "")
    if token:
        after = pagination.decode(token)
        items = [i for i in items if list(order(i)) > after]
    limit = request.query.get("limit", "")
    if not limit:
        return Page(items)
    size = whole_number(limit, "limit") or len(items)
    if len(items) <= size:
        return Page(items)
    return Page(items[:size], pagination.encode(list(order(items[size - 1]))), len(items) - size)


FIELD_PATHS = ("metadata.name", "metadata.namespace", "spec.nodeName", "spec.schedulerName", "spec.restartPolicy",
               "spec.serviceAccountName", "spec.hostNetwork", "spec.unschedulable", "status.phase",
               "status.nominatedNodeName", "status.podIP")
"""The fields a fieldSelector may name (those the API server indexes for pods, and nodes')."""
EVENT_FIELD_PATHS = ("metadata.name", "metadata.namespace", "involvedObject.kind", "involvedObject.namespace",
                     "involvedObject.name", "involvedObject.uid", "involvedObject.apiVersion", "reason", "type",
                     "source", "reportingComponent")
"""The fields the API server indexes for core v1 events."""


def _field(item: dict[str, Any], path: str) -> str:
    value: Any = item
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    if isinstance(value, dict):  # `source` selects on its component
        value = value.get("component")
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _field_terms(text: str, allowed: tuple[str, ...]) -> list[tuple[str, str, bool]]:
    """The API server's fieldSelector: `path=value` or `path!=value`, comma-separated."""
    terms = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        negate = "!=" in part
        path, _, value = part.partition("!=" if negate else "=")
        path, value = path.strip(), value.strip().lstrip("=")
        if path not in allowed:
            raise InvalidInput("request", "fieldSelector",
                               f"field label not supported: {path} ({', '.join(allowed)})")
        terms.append((path, value, negate))
    return terms
