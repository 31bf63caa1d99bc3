"""Bodies kubectl's typed clients send in Kubernetes' protobuf encoding, read as their JSON."""

from __future__ import annotations

import pytest

from services.gateway.protobuf_body import PROTOBUF, UnsupportedBody, body_text, decode
from shared.errors import InvalidInput

# kubectl drain's DeleteOptions, as it sent them (kubectl v1.32, -v=9).
DRAIN_DELETE = bytes.fromhex("6b3873000a130a027631120d44656c6574654f7074696f6e7312001a002200")


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _len(number: int, payload: bytes | str) -> bytes:
    data = payload.encode() if isinstance(payload, str) else payload
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _num(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value & (1 << 64) - 1)


def _envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    return b"k8s\x00" + _len(1, _len(1, api_version) + _len(2, kind)) + _len(2, raw) + _len(3, "") + _len(4, "")


def _meta(name: str, namespace: str = "", labels: dict[str, str] | None = None) -> bytes:
    # Upstream's encoder writes empty strings and the zero creation time too.
    entries = b"".join(_len(11, _len(1, k) + _len(2, v)) for k, v in (labels or {}).items())
    return _len(1, name) + _len(2, "") + _len(3, namespace) + _len(8, _num(1, 0) + _num(2, 0)) + entries


def test_kubectl_drains_delete_options_are_empty() -> None:
    assert decode(DRAIN_DELETE) == {"apiVersion": "v1", "kind": "DeleteOptions"}
    dry = _envelope("v1", "DeleteOptions", _num(1, 30) + _len(5, "All") + _len(4, "Background"))
    assert decode(dry) == {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 30,
                           "dryRun": ["All"], "propagationPolicy": "Background"}


def test_kubectl_create_namespace_priorityclass_and_pdb() -> None:
    namespace = _envelope("v1", "Namespace", _len(1, _meta("team", labels={"env": "", "tier": "web"})) + _len(2, b""))
    assert decode(namespace) == {"apiVersion": "v1", "kind": "Namespace",
                                 "metadata": {"name": "team", "labels": {"env": "", "tier": "web"}}, "spec": {}}
    negative = _envelope("scheduling.k8s.io/v1", "PriorityClass",
                         _len(1, _meta("low")) + _num(2, -5) + _num(3, 0) + _len(4, "") + _len(5, "Never"))
    assert decode(negative) == {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                "metadata": {"name": "low"}, "value": -5, "globalDefault": False,
                                "preemptionPolicy": "Never"}
    selector = _len(1, _len(1, "app") + _len(2, "x")) + _len(2, _len(1, "tier") + _len(2, "In") + _len(3, "web"))
    spec = _len(1, _num(1, 1) + _num(2, 0) + _len(3, "50%")) + _len(2, selector) + _len(3, _num(1, 0) + _num(2, 2))
    pdb = _envelope("policy/v1", "PodDisruptionBudget", _len(1, _meta("p", "team")) + _len(2, spec))
    assert decode(pdb)["spec"] == {"minAvailable": "50%", "maxUnavailable": 2, "selector": {
        "matchLabels": {"app": "x"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["web"]}]}}
    assert decode(pdb)["metadata"] == {"name": "p", "namespace": "team"}


def test_other_bodies_are_refused_with_what_to_send() -> None:
    with pytest.raises(UnsupportedBody, match="Pod is read as JSON only, not protobuf; protobuf bodies are read "
                                              "for DeleteOptions, Namespace, PodDisruptionBudget, PriorityClass"):
        decode(_envelope("v1", "Pod", b""))
    with pytest.raises(InvalidInput, match="no k8s"):
        decode(b'{"kind": "Namespace"}')
    with pytest.raises(InvalidInput, match="not a valid Kubernetes protobuf message: a field runs past"):
        decode(_envelope("v1", "Namespace", _len(1, b"\x0a\x7f")))


def test_json_bodies_are_read_as_text() -> None:
    assert body_text(b'{"kind": "Namespace"}', "application/json") == '{"kind": "Namespace"}'
    assert body_text(DRAIN_DELETE, PROTOBUF) == '{"apiVersion": "v1", "kind": "DeleteOptions"}'
