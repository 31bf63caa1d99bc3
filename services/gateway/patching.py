"""PATCH bodies applied to an object's JSON, by the patch's content type, as the API server does:

- `application/merge-patch+json` (RFC 7386): objects merge, `null` removes, anything else replaces;
- `application/strategic-merge-patch+json` (what `kubectl apply` and `kubectl patch` send for built-in
  kinds): a merge patch whose lists of named items (containers, volumes, env, ports…) merge item by
  item on their merge key, with the `$patch: delete` and `$setElementOrder` directives;
- `application/json-patch+json` (RFC 6902): add, remove, replace, move, copy and test;
- `application/apply-patch+yaml` (server-side apply): the applied configuration merged over the
  live object as a strategic merge. Field ownership is not tracked: every applier is one manager.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import yaml

from shared.errors import InvalidInput

MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"
CONTENT_TYPES = (MERGE, STRATEGIC, JSON_PATCH, APPLY)

MERGE_KEYS = {
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name", "volumes": "name",
    "env": "name", "volumeMounts": "mountPath", "ports": "containerPort", "imagePullSecrets": "name",
    "resourceClaims": "name", "schedulingGates": "name", "conditions": "type", "addresses": "type",
    "hostAliases": "ip", "topologySpreadConstraints": "topologyKey",
}
"""The strategic merge keys of the lists Berth's kinds hold (upstream's `patchMergeKey` tags); any
other list (taints, tolerations, readinessGates…) is replaced whole, as upstream's are."""


class UnsupportedPatch(InvalidInput):
    """A patch of a content type the gateway does not apply (415)."""


def apply_patch(live: dict[str, Any], body: bytes, content_type: str, what: str) -> dict[str, Any]:
    """`live` with the patch applied; InvalidInput naming `what` when the patch cannot apply."""
    if content_type not in CONTENT_TYPES:
        raise UnsupportedPatch(what, "Content-Type", f"the server does not apply {content_type or 'this'} patches: "
                                                     f"{', '.join(CONTENT_TYPES)}")
    try:
        patch = yaml.safe_load(body) if content_type == APPLY else json.loads(body or b"null")
    except (ValueError, yaml.YAMLError) as exc:
        raise InvalidInput(what, "patch", f"not valid {'YAML' if content_type == APPLY else 'JSON'}: {exc}") from None
    if content_type == JSON_PATCH:
        return json_patch(live, patch, what)
    if not isinstance(patch, dict):
        raise InvalidInput(what, "patch", "expected an object")
    if content_type == MERGE:
        return merge_patch(live, patch)
    return strategic_merge(live, patch)


def merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def strategic_merge(target: Any, patch: Any, field: str = "") -> Any:
    if isinstance(patch, list) and field in MERGE_KEYS and isinstance(target, list):
        return _merge_list(target, patch, MERGE_KEYS[field])
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if patch.get("$patch") == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    out = dict(target) if isinstance(target, dict) else {}
    orders = {k.split("/", 1)[1]: v for k, v in patch.items() if k.startswith("$setElementOrder/")}
    for key, value in patch.items():
        if key.startswith("$"):
            continue
        if value is None:
            out.pop(key, None)
        else:
            out[key] = strategic_merge(out.get(key), value, key)
    for key, order in orders.items():
        if isinstance(out.get(key), list) and key in MERGE_KEYS:
            out[key] = _ordered(out[key], order, MERGE_KEYS[key])
    return out


def _merge_list(live: list[Any], patch: list[Any], key: str) -> list[Any]:
    out = [copy.deepcopy(item) for item in live]
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            out.append(copy.deepcopy(item))
            continue
        at = next((i for i, old in enumerate(out) if isinstance(old, dict) and old.get(key) == item[key]), None)
        if item.get("$patch") == "delete":
            if at is not None:
                del out[at]
        elif at is None:
            out.append(strategic_merge({}, item))
        else:
            out[at] = strategic_merge(out[at], item)
    return out


def _ordered(items: list[Any], order: list[Any], key: str) -> list[Any]:
    rank = {o.get(key): i for i, o in enumerate(order) if isinstance(o, dict)}
    return sorted(items, key=lambda item: rank.get(item.get(key) if isinstance(item, dict) else None, len(rank)))


def json_patch(target: Any, ops: Any, what: str) -> Any:
    if not isinstance(ops, list):
        raise InvalidInput(what, "patch", "a JSON patch is a list of operations")
    doc = copy.deepcopy(target)
    for i, op in enumerate(ops):
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise InvalidInput(what, f"patch[{i}]", "expected an operation with op and path")
        doc = _json_op(doc, op, f"patch[{i}]", what)
    return doc


def _pointer(path: str, where: str, what: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise InvalidInput(what, where, f"path {path!r} must start with /")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _parent(doc: Any, parts: list[str], where: str, what: str) -> Any:
    node = doc
    for part in parts[:-1]:
        try:
            node = node[_index(part, len(node), where, what)] if isinstance(node, list) else node[part]
        except (KeyError, IndexError, ValueError, TypeError):
            raise InvalidInput(what, where, f"no such path: /{'/'.join(parts)}") from None
    return node


def _json_op(doc: Any, op: dict[str, Any], where: str, what: str) -> Any:
    name = op["op"]
    parts = _pointer(str(op["path"]), where, what)
    if name in ("move", "copy"):
        source = _pointer(str(op.get("from", "")), where, what)
        value = copy.deepcopy(_get(doc, source, where, what))
        if name == "move":
            doc = _json_op(doc, {"op": "remove", "path": op["from"]}, where, what)
        return _json_op(doc, {"op": "add", "path": op["path"], "value": value}, where, what)
    if name == "test":
        if _get(doc, parts, where, what) != op.get("value"):
            raise InvalidInput(what, where, f"test failed at {op['path']}")
        return doc
    if not parts:
        return copy.deepcopy(op.get("value")) if name in ("add", "replace") else None
    parent, last = _parent(doc, parts, where, what), parts[-1]
    try:
        if name == "remove":
            del parent[_index(last, len(parent), where, what) if isinstance(parent, list) else last]
        elif name == "replace":
            _get(doc, parts, where, what)
            parent[_index(last, len(parent), where, what) if isinstance(parent, list) else last] = copy.deepcopy(
                op.get("value"))
        elif name == "add":
            if isinstance(parent, list):
                at = len(parent) if last == "-" else _index(last, len(parent) + 1, where, what)
                parent.insert(at, copy.deepcopy(op.get("value")))
            else:
                parent[last] = copy.deepcopy(op.get("value"))
        else:
            raise InvalidInput(what, where, f"unknown op {name!r}: add, remove, replace, move, copy, test")
    except (KeyError, IndexError, ValueError, TypeError):
        raise InvalidInput(what, where, f"no such path: {op['path']}") from None
    return doc


def _index(text: str, size: int, where: str, what: str) -> int:
    """A list index as RFC 6902 allows it: digits only (no negatives), below `size`."""
    if not (text.isascii() and text.isdigit()) or int(text) >= size:
        raise InvalidInput(what, where, f"index {text!r} is out of range")
    return int(text)


def _get(doc: Any, parts: list[str], where: str, what: str) -> Any:
    node = doc
    for part in parts:
        try:
            node = node[_index(part, len(node), where, what)] if isinstance(node, list) else node[part]
        except (KeyError, IndexError, ValueError, TypeError):
            raise InvalidInput(what, where, f"no such path: /{'/'.join(parts)}") from None
    return node
