"""Request bodies kubectl sends in Kubernetes' protobuf encoding, read as the JSON they stand for.

kubectl's typed clients write protobuf (`application/vnd.kubernetes.protobuf`): `kubectl create
namespace|priorityclass|poddisruptionbudget` post the object so, and `kubectl drain` deletes each
pod with a DeleteOptions body so; another scheduler (kube-scheduler's default content type) posts
its pods/binding Binding so. The body is the API machinery's envelope: the magic `k8s\\0`,
then a `runtime.Unknown` holding the apiVersion and kind, and the object's own message as raw bytes.
This reads the envelope and those kinds' messages (field numbers as upstream's generated.proto
files give them) into the JSON-shaped object the rest of the gateway validates; a field the
message has that Berth's kinds do not hold is skipped, as the API server skips unknown protobuf
fields. A body of another kind is refused (415) with what to send instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from shared.errors import InvalidInput
from shared.model.loader import decode_text

PROTOBUF = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"


class UnsupportedBody(InvalidInput):
    """A body the gateway cannot read in the encoding it came in (415)."""


class _Malformed(Exception):
    pass


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise _Malformed("a varint runs past the message")
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if not byte & 0x80:
            return value & 0xFFFFFFFFFFFFFFFF, at  # a tenth byte's bits past 64 are dropped, as Go drops them


def _fields(data: bytes) -> list[tuple[int, int | bytes]]:
    """Each field's number and value: an int for a varint (or fixed-width) field, bytes when
    length-delimited."""
    out: list[tuple[int, int | bytes]] = []
    at = 0
    while at < len(data):
        tag, at = _varint(data, at)
        number, wire = tag >> 3, tag & 7
        value: int | bytes
        if wire == 0:
            value, at = _varint(data, at)
        elif wire == 2:
            size, at = _varint(data, at)
            if at + size > len(data):
                raise _Malformed("a field runs past the message")
            value, at = data[at:at + size], at + size
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            if at + width > len(data):
                raise _Malformed("a field runs past the message")
            value, at = int.from_bytes(data[at:at + width], "little"), at + width
        else:
            raise _Malformed(f"wire type {wire} of field {number}")
        out.append((number, value))
    return out


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


# How each field reads: a message's fields by number, as (JSON name, reader, repeated).
_Reader = Callable[[int | bytes], Any]
_Message = dict[int, tuple[str, _Reader, bool]]


def _text(value: int | bytes) -> str:
    return _bytes(value).decode()


def _int(value: int | bytes) -> int:
    if isinstance(value, bytes):
        raise _Malformed("an integer field is length-delimited")
    return _signed(value)


def _int32(value: int | bytes) -> int:
    """An int32 field: its low 32 bits, signed (a negative one may come in 5 bytes or 10)."""
    low = _int(value) & 0xFFFFFFFF
    return low - (1 << 32) if low >= 1 << 31 else low


def _bool(value: int | bytes) -> bool:
    return bool(_int(value))


def _message(schema: _Message) -> _Reader:
    def read(value: int | bytes) -> dict[str, Any]:
        return _read(_bytes(value), schema)
    return read


def _bytes(value: int | bytes) -> bytes:
    if not isinstance(value, bytes):
        raise _Malformed("a string or message field is not length-delimited")
    return value


def _entry(value: int | bytes) -> tuple[str, str]:
    """A map<string, string> entry."""
    fields = dict(_fields(_bytes(value)))
    return _text(fields.get(1, b"")), _text(fields.get(2, b""))


def _time(value: int | bytes) -> str | None:
    fields = dict(_fields(_bytes(value)))
    seconds = _int(fields.get(1, 0))
    if not seconds:
        return None  # the zero time, which JSON writes as null
    if not _FIRST_SECOND <= seconds <= _LAST_SECOND:
        raise _Malformed(f"a timestamp of {seconds} seconds is outside the years 1 to 9999")
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_FIRST_SECOND, _LAST_SECOND = -62135596800, 253402300799
"""0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z, the times RFC 3339 can write."""


def _count(value: int | bytes) -> int | None:
    return _int(value) or None


def _int_or_string(value: int | bytes) -> int | str:
    fields = dict(_fields(_bytes(value)))
    return _text(fields.get(3, b"")) if _int(fields.get(1, 0)) == 1 else _int32(fields.get(2, 0))


_MAPS = frozenset({"labels", "annotations", "matchLabels"})

OWNER_REFERENCE: _Message = {
    1: ("kind", _text, False), 3: ("name", _text, False), 4: ("uid", _text, False),
    5: ("apiVersion", _text, False), 6: ("controller", _bool, False), 7: ("blockOwnerDeletion", _bool, False),
}
OBJECT_META: _Message = {
    1: ("name", _text, False), 2: ("generateName", _text, False), 3: ("namespace", _text, False),
    5: ("uid", _text, False), 6: ("resourceVersion", _text, False), 7: ("generation", _count, False),
    8: ("creationTimestamp", _time, False), 11: ("labels", _entry, True), 12: ("annotations", _entry, True),
    13: ("ownerReferences", _message(OWNER_REFERENCE), True), 14: ("finalizers", _text, True),
}
LABEL_SELECTOR: _Message = {
    1: ("matchLabels", _entry, True),
    2: ("matchExpressions", _message({1: ("key", _text, False), 2: ("operator", _text, False),
                                      3: ("values", _text, True)}), True),
}
_METADATA = (1, ("metadata", _message(OBJECT_META), False))
KINDS: dict[str, _Message] = {
    "Namespace": dict([_METADATA, (2, ("spec", _message({1: ("finalizers", _text, True)}), False))]),
    "PriorityClass": dict([_METADATA, (2, ("value", _int32, False)), (3, ("globalDefault", _bool, False)),
                           (4, ("description", _text, False)), (5, ("preemptionPolicy", _text, False))]),
    "PodDisruptionBudget": dict([_METADATA, (2, ("spec", _message({
        1: ("minAvailable", _int_or_string, False), 2: ("selector", _message(LABEL_SELECTOR), False),
        3: ("maxUnavailable", _int_or_string, False), 4: ("unhealthyPodEvictionPolicy", _text, False),
    }), False))]),
    "Binding": dict([_METADATA, (2, ("target", _message({
        1: ("kind", _text, False), 2: ("namespace", _text, False), 3: ("name", _text, False),
        4: ("uid", _text, False), 5: ("apiVersion", _text, False), 6: ("resourceVersion", _text, False),
    }), False))]),
    # kubectl auth can-i: the spec's resource or non-resource attributes (authorization/v1).
    "SelfSubjectAccessReview": dict([_METADATA, (2, ("spec", _message({
        1: ("resourceAttributes", _message({
            1: ("namespace", _text, False), 2: ("verb", _text, False), 3: ("group", _text, False),
            4: ("version", _text, False), 5: ("resource", _text, False), 6: ("subresource", _text, False),
            7: ("name", _text, False)}), False),
        2: ("nonResourceAttributes", _message({1: ("path", _text, False), 2: ("verb", _text, False)}), False),
    }), False))]),
    "SelfSubjectRulesReview": dict([_METADATA, (2, ("spec", _message({1: ("namespace", _text, False)}), False))]),
    "DeleteOptions": {
        1: ("gracePeriodSeconds", _int, False),
        2: ("preconditions", _message({1: ("uid", _text, False), 2: ("resourceVersion", _text, False)}), False),
        3: ("orphanDependents", _bool, False), 4: ("propagationPolicy", _text, False), 5: ("dryRun", _text, True),
    },
}


def _read(data: bytes, schema: _Message) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for number, value in _fields(data):
        known = schema.get(number)
        if known is None:
            continue  # a field Berth's kinds do not hold
        name, reader, repeated = known
        read = reader(value)
        if read is None or read == "":
            # Written though empty (upstream's encoder writes every string and timestamp); JSON
            # leaves such fields out.
            continue
        if name in _MAPS:
            key, item = read
            out.setdefault(name, {})[key] = item
        elif repeated:
            out.setdefault(name, []).append(read)
        else:
            out[name] = read
    return out


def decode(body: bytes) -> dict[str, Any]:
    """The object a protobuf body holds, as its JSON would have it (apiVersion and kind included)."""
    if not body.startswith(MAGIC):
        raise InvalidInput("request body", "", "not a Kubernetes protobuf message (no k8s\\0 prefix)")
    try:
        envelope = dict(_fields(body[len(MAGIC):]))
        type_meta = _read(_bytes(envelope.get(1, b"")), {1: ("apiVersion", _text, False), 2: ("kind", _text, False)})
        api_version, kind = type_meta.get("apiVersion", ""), type_meta.get("kind", "")
        schema = KINDS.get(kind)
        if schema is None:
            raise UnsupportedBody("request body", "kind", f"{kind or 'this kind'} is read as JSON only, not "
                                  f"protobuf; protobuf bodies are read for {', '.join(sorted(KINDS))}")
        obj = _read(_bytes(envelope.get(2, b"")), schema)
    except (_Malformed, UnicodeDecodeError, ValueError, OverflowError) as exc:
        raise InvalidInput("request body", "", f"not a valid Kubernetes protobuf message: {exc}") from None
    return {"apiVersion": api_version, "kind": kind, **obj}


def body_json(body: bytes, content_type: str) -> Any:
    """A JSON or protobuf request body as the JSON value it holds (ValueError: JSON that does not
    parse; InvalidInput: protobuf that does not decode)."""
    return decode(body) if content_type == PROTOBUF else json.loads(body)


def body_text(body: bytes, content_type: str) -> str:
    """A request body as the text the gateway's parsers read: a protobuf one as its JSON."""
    return json.dumps(decode(body)) if content_type == PROTOBUF else decode_text(body, "request body")
