"""The wire codec: envelopes as msgpack (compact and fast), rendered as JSON for people.

Every decoding failure, whatever its cause (not msgpack, a missing field, a payload type that does
not belong on the topic, a schema from the future), raises `shared.errors.DecodeError`: that is the
signal to dead-letter the message.
"""

from __future__ import annotations

from typing import Any

import msgspec

from shared.errors import DecodeError, GapRecord

from .catalogue import AnyEvent
from .envelope import SCHEMA_VERSION, Envelope
from .topics import TOPICS

__all__ = [
    "GAP",
    "decode",
    "decode_json",
    "encode",
    "encode_json",
    "payload_from_builtins",
    "payload_to_builtins",
    "render_json",
]

_msgpack_encoder = msgspec.msgpack.Encoder()
_msgpack_decoder = msgspec.msgpack.Decoder(Envelope)
_json_encoder = msgspec.json.Encoder()
_json_decoder = msgspec.json.Decoder(Envelope)
_TOPIC_EVENTS: dict[str, frozenset[str]] = {spec.name: spec.readable_names for spec in TOPICS}


GAP = b"\x00berth:gap"
"""The value of a record that holds no event. A log rebuilt from the event store keeps every event
at its recorded offset; an offset whose record was never stored (it was dead-lettered, or a second
copy of an event) gets this filler. Not msgpack of an envelope, so it can never be taken for one."""


def encode(env: Envelope) -> bytes:
    """The envelope as msgpack bytes, ready for a Kafka message value."""
    return _msgpack_encoder.encode(env)


def decode(data: bytes, *, topic: str | None = None) -> Envelope:
    """Decode msgpack bytes; with `topic` (logical name), also check the payload belongs there.
    A `GAP` filler raises `GapRecord` (a `DecodeError` that is not to be dead-lettered)."""
    if data == GAP:
        raise GapRecord("offset filler of a restored log", topic=topic or "")
    try:
        env = _msgpack_decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise DecodeError(str(exc), topic=topic or "") from None
    return _validated(env, topic)


def encode_json(env: Envelope) -> bytes:
    """The envelope as compact JSON (UUIDs and timestamps as strings)."""
    return _json_encoder.encode(env)


def decode_json(data: bytes | str, *, topic: str | None = None) -> Envelope:
    try:
        env = _json_decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise DecodeError(str(exc), topic=topic or "") from None
    return _validated(env, topic)


def render_json(env: Envelope, *, indent: int = 2) -> str:
    """A readable, indented JSON rendering of one envelope (what `berth events` prints)."""
    return msgspec.json.format(_json_encoder.encode(env), indent=indent).decode()


def payload_to_builtins(payload: AnyEvent) -> dict[str, Any]:
    """The payload as JSON-compatible builtins (with its "type" tag), e.g. for a JSONB column."""
    data: dict[str, Any] = msgspec.to_builtins(payload)
    return data


def payload_from_builtins(data: Any, *, type_name: str | None = None) -> AnyEvent:
    """The inverse of `payload_to_builtins`; `type_name`, when given, must match the tag."""
    try:
        payload: AnyEvent = msgspec.convert(data, AnyEvent)
    except msgspec.ValidationError as exc:
        raise DecodeError(str(exc)) from None
    if type_name is not None and type(payload).__name__ != type_name:
        raise DecodeError(f"payload is a {type(payload).__name__}, the record says {type_name}")
    return payload


def _validated(env: Envelope, topic: str | None) -> Envelope:
    actual = type(env.payload).__name__
    if env.type != actual:
        raise DecodeError(f"envelope type {env.type!r} does not match its payload {actual!r}", topic=topic or "")
    if not 1 <= env.schema_version <= SCHEMA_VERSION:
        raise DecodeError(
            f"schema version {env.schema_version} is not supported (this build reads 1..{SCHEMA_VERSION})",
            topic=topic or "",
        )
    if topic is not None:
        allowed = _TOPIC_EVENTS.get(topic)
        if allowed is None:
            raise DecodeError(f"unknown topic {topic!r}", topic=topic)
        if actual not in allowed:
            raise DecodeError(f"{actual} does not belong on this topic", topic=topic)
    if env.timestamp.tzinfo is None:
        raise DecodeError("timestamp has no timezone", topic=topic or "")
    return env
