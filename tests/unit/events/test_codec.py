"""The wire codec: every event round-trips through msgpack and JSON; bad bytes raise DecodeError."""

from __future__ import annotations

import gc
import uuid
from datetime import UTC, datetime

import msgspec
import pytest

from shared.errors import BerthError, DecodeError
from shared.events import (
    EVENT_TYPES,
    SCHEMA_VERSION,
    TOPICS,
    AnyEvent,
    Envelope,
    NodeDeleted,
    PodSubmitted,
    decode,
    decode_json,
    derived_id,
    encode,
    encode_json,
    envelope,
    payload_from_builtins,
    payload_to_builtins,
    render_json,
)
from shared.events.topics import TopicRegistry

from .samples import make_pod, sample_payloads

REGISTRY = TopicRegistry()
PAYLOADS = sample_payloads()
T0 = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)


def _wrap(payload: AnyEvent) -> Envelope:
    cause = envelope(NodeDeleted(node_name="x"), producer="test", correlation_id="pod-1/1", timestamp=T0)
    return envelope(payload, producer="test", caused_by=cause, timestamp=T0)


@pytest.mark.parametrize("payload", PAYLOADS, ids=lambda p: type(p).__name__)
def test_msgpack_round_trip(payload: AnyEvent) -> None:
    env = _wrap(payload)
    assert decode(encode(env), topic=REGISTRY.topic_of(payload)) == env


@pytest.mark.parametrize("payload", PAYLOADS, ids=lambda p: type(p).__name__)
def test_json_round_trip(payload: AnyEvent) -> None:
    env = _wrap(payload)
    assert decode_json(encode_json(env), topic=REGISTRY.topic_of(payload)) == env
    assert decode_json(render_json(env)) == env


@pytest.mark.parametrize("payload", PAYLOADS, ids=lambda p: type(p).__name__)
def test_payload_builtins_round_trip(payload: AnyEvent) -> None:
    data = payload_to_builtins(payload)
    assert data["type"] == type(payload).__name__
    assert payload_from_builtins(msgspec.json.decode(msgspec.json.encode(data)), type_name=data["type"]) == payload


def test_envelope_fields_follow_the_cause() -> None:
    cause = envelope(NodeDeleted(node_name="n"), producer="queue", correlation_id="uid-1/3")
    env = envelope(PodSubmitted(pod=make_pod(uid="uid-9")), producer="gateway", caused_by=cause)
    assert env.type == "PodSubmitted"
    assert env.key == "uid-9"
    assert env.causation_id == cause.event_id
    assert env.correlation_id == "uid-1/3"
    assert env.timestamp.tzinfo is not None
    assert env.schema_version == SCHEMA_VERSION


def test_every_event_type_has_exactly_one_topic() -> None:
    seen = [name for spec in TOPICS for name in spec.event_names]
    assert sorted(seen) == sorted(EVENT_TYPES)


def test_derived_ids_are_deterministic() -> None:
    cause = uuid.uuid4()
    assert derived_id(cause, "bind", 1) == derived_id(cause, "bind", 1)
    assert derived_id(cause, "bind", 1) != derived_id(cause, "bind", 2)


def test_naive_timestamps_are_refused() -> None:
    with pytest.raises(ValueError):
        envelope(NodeDeleted(node_name="n"), producer="p", timestamp=datetime(2026, 1, 1))


@pytest.mark.parametrize(
    ("data", "topic", "fragment"),
    [
        pytest.param(b"\xc1", "pods", "", id="not-msgpack"),
        pytest.param(msgspec.msgpack.encode({"event_id": "x"}), "pods", "", id="missing-fields"),
        pytest.param(b"", None, "", id="empty"),
        pytest.param(encode(envelope(NodeDeleted(node_name="n"), producer="p")), "pods", "does not belong",
                     id="wrong-topic"),
        pytest.param(encode(envelope(NodeDeleted(node_name="n"), producer="p")), "nope", "unknown topic",
                     id="unknown-topic"),
    ],
)
def test_bad_bytes_raise_decode_error(data: bytes, topic: str | None, fragment: str) -> None:
    with pytest.raises(DecodeError) as info:
        decode(data, topic=topic)
    assert isinstance(info.value, BerthError) and not info.value.retriable
    assert fragment in str(info.value)


def test_mismatched_type_and_future_schema_are_refused() -> None:
    env = envelope(NodeDeleted(node_name="n"), producer="p")
    lying = msgspec.structs.replace(env, type="PodBound")
    with pytest.raises(DecodeError, match="does not match"):
        decode(encode(lying))
    future = msgspec.structs.replace(env, schema_version=99)
    with pytest.raises(DecodeError, match="schema version 99"):
        decode(encode(future), topic="nodes")


def test_events_of_every_earlier_schema_version_still_decode() -> None:
    env = envelope(NodeDeleted(node_name="n"), producer="p")
    for version in range(1, SCHEMA_VERSION + 1):
        older = msgspec.structs.replace(env, schema_version=version)
        assert decode(encode(older), topic="nodes") == older


def test_unknown_payload_type_is_a_decode_error() -> None:
    raw = msgspec.msgpack.decode(encode(envelope(NodeDeleted(node_name="n"), producer="p")))
    raw["payload"]["type"] = "NodeExploded"
    raw["type"] = "NodeExploded"
    with pytest.raises(DecodeError):
        decode(msgspec.msgpack.encode(raw))
    with pytest.raises(DecodeError):
        payload_from_builtins({"type": "NodeExploded"})
    with pytest.raises(DecodeError, match="record says"):
        payload_from_builtins({"type": "NodeDeleted", "node_name": "n"}, type_name="PodBound")


@pytest.mark.parametrize("payload", PAYLOADS, ids=lambda p: type(p).__name__)
def test_decoded_events_and_their_objects_are_not_tracked_by_the_garbage_collector(payload: AnyEvent) -> None:
    """Services hold every event's objects for as long as they run; full collections would walk
    them all (`gc=False` on the model's and the events' bases)."""
    env = decode(encode(_wrap(payload)))
    structs = [env, env.payload, *(v for v in msgspec.structs.asdict(env.payload).values()
                                   if isinstance(v, msgspec.Struct))]
    assert [type(s).__name__ for s in structs if gc.is_tracked(s)] == []
