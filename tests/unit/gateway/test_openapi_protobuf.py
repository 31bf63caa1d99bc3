"""The Swagger document in gnostic's protobuf form, read back with a wire-format reader of its own."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from services.gateway import openapi, openapi_protobuf


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if not byte & 0x80:
            return value, at


def _fields(data: bytes) -> list[tuple[int, Any]]:
    """Each field's number and value (an int for a varint, bytes when length-delimited)."""
    out: list[tuple[int, Any]] = []
    at = 0
    while at < len(data):
        tag, at = _varint(data, at)
        if tag & 7 == 0:
            value, at = _varint(data, at)
            out.append((tag >> 3, value))
        else:
            assert tag & 7 == 2, f"wire type {tag & 7}"
            size, at = _varint(data, at)
            out.append((tag >> 3, data[at:at + size]))
            at += size
    assert at == len(data)
    return out


def _named(data: bytes) -> tuple[str, bytes]:
    fields = dict(_fields(data))
    return fields[1].decode(), fields[2]


def test_varints_and_fields_as_the_wire_format_has_them() -> None:
    assert openapi_protobuf._varint(1) == b"\x01" and openapi_protobuf._varint(300) == b"\xac\x02"
    assert openapi_protobuf._string(1, "2.0") == b"\x0a\x032.0"
    assert openapi_protobuf._string(1, "") == b"", "proto3 leaves an empty string out"


def test_a_schema_keeps_every_key() -> None:
    schema = {"type": "object", "description": "d", "required": ["a"], "additionalProperties": False,
              "properties": {"b": {"type": "array", "items": {"$ref": "#/definitions/X"}}, "a": {"type": "string"}},
              "x-kubernetes-group-version-kind": [{"group": "", "kind": "Pod", "version": "v1"}]}
    fields = _fields(openapi_protobuf.schema(schema))
    by_number: dict[int, list[Any]] = {}
    for number, value in fields:
        by_number.setdefault(number, []).append(value)
    assert by_number[4] == [b"d"] and by_number[19] == [b"a"]
    assert by_number[21] == [b"\x10\x00"], "additionalProperties: false is the oneof's boolean, sent though false"
    assert _fields(by_number[22][0]) == [(1, b"object")]
    properties = [_named(entry) for _, entry in _fields(by_number[25][0])]
    assert [name for name, _ in properties] == ["a", "b"]
    items = dict(_fields(dict(properties)["b"]))[23]
    assert _fields(dict(_fields(items))[1]) == [(1, b"#/definitions/X")]
    name, extension = _named(by_number[31][0])
    assert name == "x-kubernetes-group-version-kind"
    assert json.loads(dict(_fields(extension))[2]) == schema["x-kubernetes-group-version-kind"], "the value as YAML"
    with pytest.raises(ValueError, match="schema key 'oneOf' has no field"):
        openapi_protobuf.schema({"oneOf": []})


def test_the_document_carries_every_definition_with_its_kind() -> None:
    fields = dict(_fields(openapi.swagger_protobuf()))
    assert fields[1] == b"2.0" and dict(_fields(fields[2]))[1] == b"Berth"
    definitions = dict(_named(entry) for _, entry in _fields(fields[9]))
    assert definitions.keys() == json.loads(openapi.swagger())["definitions"].keys()
    pod = dict(_fields(definitions["io.k8s.api.core.v1.Pod"]))
    name, extension = _named(pod[31])
    assert name == "x-kubernetes-group-version-kind"
    assert json.loads(dict(_fields(extension))[2]) == [{"group": "", "kind": "Pod", "version": "v1"}]


async def test_kubectl_is_answered_in_protobuf_other_clients_in_json() -> None:
    app = web.Application()
    openapi.install(app)
    async with TestClient(TestServer(app)) as client:
        asked = await client.get("/openapi/v2", headers={"Accept": openapi.PROTOBUF + "@v1.0+protobuf"})
        assert asked.status == 200 and asked.headers["Content-Type"] == openapi.PROTOBUF_TYPE
        assert await asked.read() == openapi.swagger_protobuf()
        plain = await client.get("/openapi/v2", headers={"Accept": "application/json"})
        assert plain.status == 200 and (await plain.json())["swagger"] == "2.0"
