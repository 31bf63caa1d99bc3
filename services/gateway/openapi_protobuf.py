"""The Swagger 2.0 document in the protobuf form the API server serves it in, which kubectl asks for.

kubectl reads `/openapi/v2` only as protobuf (gnostic's `openapi.v2.Document`): to validate an
object on the client when the server's OpenAPI v3 does not say it validates that kind itself (an
unknown kind: kubectl then finds no schema, skips validation and says the kind has no match, as
against the API server), and for `kubectl explain --output plaintext-openapiv2`. Both read the
document's definitions, which this form carries with its `swagger` and `info`; the paths are in
the JSON form only.

Pure encoding: field numbers as gnostic's OpenAPIv2.proto gives them; vendor extensions
(`x-kubernetes-...`) carry their value as YAML text (JSON is YAML), as gnostic writes them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

# gnostic openapi.v2 field numbers.
_DOCUMENT_SWAGGER, _DOCUMENT_INFO, _DOCUMENT_DEFINITIONS = 1, 2, 9
_INFO_TITLE, _INFO_VERSION = 1, 2
_NAMED_NAME, _NAMED_VALUE = 1, 2
_ANY_YAML = 2
_ADDITIONAL_SCHEMA, _ADDITIONAL_BOOLEAN = 1, 2
_ENTRIES = 1
"""Definitions, Properties, ItemsItem and TypeItem: their one repeated field."""


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        if not value:
            out.append(low)
            return bytes(out)
        out.append(low | 0x80)


def _bytes(field: int, payload: bytes) -> bytes:
    """A length-delimited field (string, bytes, message)."""
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _string(field: int, text: str) -> bytes:
    return _bytes(field, text.encode()) if text else b""  # proto3 leaves an empty string out


def _bool(field: int, flag: bool) -> bytes:
    return _varint(field << 3) + _varint(int(flag))


def _any(value: Any) -> bytes:
    return _string(_ANY_YAML, json.dumps(value, sort_keys=True))


def _named(name: str, value: bytes) -> bytes:
    return _string(_NAMED_NAME, name) + _bytes(_NAMED_VALUE, value)


def _strings(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else [str(v) for v in value]


def _additional(value: Any) -> bytes:
    if isinstance(value, bool):
        return _bool(_ADDITIONAL_BOOLEAN, value)
    return _bytes(_ADDITIONAL_SCHEMA, schema(value))


def _items(value: Any) -> bytes:
    return b"".join(_bytes(_ENTRIES, schema(v)) for v in (value if isinstance(value, list) else [value]))


def _properties(value: Mapping[str, Any]) -> bytes:
    return b"".join(_bytes(_ENTRIES, _named(name, schema(v))) for name, v in sorted(value.items()))


_SCHEMA_FIELDS: dict[str, tuple[int, Callable[[Any], bytes]]] = {
    "$ref": (1, lambda v: str(v).encode()),
    "format": (2, lambda v: str(v).encode()),
    "title": (3, lambda v: str(v).encode()),
    "description": (4, lambda v: str(v).encode()),
    "default": (5, _any),
    "additionalProperties": (21, _additional),
    "type": (22, lambda v: b"".join(_string(_ENTRIES, t) for t in _strings(v))),
    "items": (23, _items),
    "properties": (25, _properties),
}
_SCHEMA_REQUIRED, _SCHEMA_ENUM, _SCHEMA_ALL_OF, _SCHEMA_EXTENSION = 19, 20, 24, 31


def schema(value: Mapping[str, Any]) -> bytes:
    """One Swagger schema as gnostic's `Schema` message; a key it has no field for is refused,
    so that no part of a schema is dropped unseen."""
    out = bytearray()
    extensions = []
    for key in sorted(value):
        v = value[key]
        if key in _SCHEMA_FIELDS:
            field, encode = _SCHEMA_FIELDS[key]
            out += _bytes(field, encode(v))
        elif key == "required":
            out += b"".join(_string(_SCHEMA_REQUIRED, name) for name in v)
        elif key == "enum":
            out += b"".join(_bytes(_SCHEMA_ENUM, _any(item)) for item in v)
        elif key == "allOf":
            out += b"".join(_bytes(_SCHEMA_ALL_OF, schema(s)) for s in v)
        elif key.startswith("x-"):
            extensions.append(_bytes(_SCHEMA_EXTENSION, _named(key, _any(v))))
        else:
            raise ValueError(f"schema key {key!r} has no field in the protobuf form")
    return bytes(out) + b"".join(extensions)


def document(swagger: Mapping[str, Any]) -> bytes:
    """The document's swagger version, info and definitions as gnostic's `Document` message."""
    info = swagger.get("info") or {}
    definitions = b"".join(_bytes(_ENTRIES, _named(name, schema(s)))
                           for name, s in sorted(swagger.get("definitions", {}).items()))
    return (_string(_DOCUMENT_SWAGGER, str(swagger.get("swagger", "")))
            + _bytes(_DOCUMENT_INFO, _string(_INFO_TITLE, str(info.get("title", "")))
                     + _string(_INFO_VERSION, str(info.get("version", ""))))
            + _bytes(_DOCUMENT_DEFINITIONS, definitions))
