"""Lists narrowed as the API server narrows them: `labelSelector`, `fieldSelector` on the fields its
field label conversions accept for each kind, and pages of `limit` items that `continue` resumes.

A selector the API server cannot read is its 400 BadRequest (`BadSelector`), not the 422 of an
invalid object."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from shared.errors import InvalidInput
from shared.model.selectors import parse_selector

from . import pagination
from .params import whole_number


class BadSelector(InvalidInput):
    """A label or field selector that does not parse, or names a field its kind is not selected by."""


def selection(request: web.Request, kind: str) -> Callable[[dict[str, Any]], bool]:
    """What `labelSelector` (kubectl's -l syntax) and `fieldSelector` (spec.nodeName=n1 and the
    like, on the fields the API server lets one select `kind` by) select, checked once: a bad
    selector is refused before anything is read."""
    text = request.query.get("labelSelector", "")
    try:
        selector = parse_selector(text) if text else None
    except ValueError as exc:
        raise BadSelector("request", "labelSelector", str(exc)) from None
    fields = field_terms(request, kind)

    def matches(item: dict[str, Any]) -> bool:
        if selector is not None and not selector.matches((item.get("metadata") or {}).get("labels") or {}):
            return False
        return all((_field(item, path) == value) != negate for path, value, negate in fields)

    return matches


Order = Callable[[dict[str, Any]], tuple[str, ...]]
"""The key a list is sorted and continued by."""


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


def listed(request: web.Request, kind: str, items: list[dict[str, Any]], order: Order = by_key) -> Page:
    """A list narrowed as the API server narrows one: the selectors, then a page of `limit` items in
    `order` (namespace and name unless told) from where `continue` left off. A continued list reads
    the objects as they are now (the API server would serve the first page's snapshot), after the
    last one already sent."""
    matches = selection(request, kind)
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


OBJECT_META_PATHS = ("metadata.name", "metadata.namespace")
"""What a fieldSelector may name for a kind the API server gives no fields of its own."""
FIELD_PATHS: dict[str, tuple[str, ...]] = {
    "Pod": (*OBJECT_META_PATHS, "spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
            "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs",
            "status.nominatedNodeName"),
    "Node": ("metadata.name", "spec.unschedulable"),
    "Namespace": ("metadata.name", "status.phase"),
    "Service": (*OBJECT_META_PATHS, "spec.clusterIP", "spec.type"),
    "Event": (*OBJECT_META_PATHS, "involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
              "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
              "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"),
}
"""Per kind, the fields a fieldSelector may name: those the API server's field label conversions
accept for core v1 (any other kind: `OBJECT_META_PATHS`); another is refused, as it refuses it."""
UNINDEXED_FIELDS = frozenset({"status.podIPs"})
"""Fields a selector may name that the API server's objects never hold a value of: always empty."""
BOOLEAN_FIELDS = frozenset({"spec.hostNetwork", "spec.unschedulable"})
"""Fields the API server selects on as `true` or `false`: an object without one has `false`."""
FIELD_ALIASES: dict[str, dict[str, str]] = {"Pod": {"spec.host": "spec.nodeName"}}
"""Field names old clients send, read as the field they became."""


def field_paths(kind: str) -> tuple[str, ...]:
    return FIELD_PATHS.get(kind, OBJECT_META_PATHS)


def _field(item: dict[str, Any], path: str) -> str:
    if path in UNINDEXED_FIELDS:
        return ""
    value: Any = item
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    if isinstance(value, dict):  # `source` selects on its component
        value = value.get("component")
    if isinstance(value, bool) or (value is None and path in BOOLEAN_FIELDS):
        return "true" if value else "false"
    return "" if value is None else str(value)


def field_terms(request: web.Request, kind: str) -> list[tuple[str, str, bool]]:
    """The request's fieldSelector as (field, value, negated) terms: `field=value` (or `==`) and
    `field!=value`, comma-separated, each field one `kind` is selected by (old names read as new)."""
    allowed, aliases = field_paths(kind), FIELD_ALIASES.get(kind, {})
    terms = []
    for part in (p.strip() for p in request.query.get("fieldSelector", "").split(",") if p.strip()):
        negate = "!=" in part
        path, _, value = part.partition("!=" if negate else "=")
        path, value = path.strip(), value.strip().lstrip("=")
        path = aliases.get(path, path)
        if path not in allowed:
            raise BadSelector("request", "fieldSelector",
                               f"field label not supported: {path} ({', '.join(allowed)})")
        terms.append((path, value, negate))
    return terms
