"""Bodies kubectl's typed clients send in Kubernetes' protobuf encoding, read as their JSON."""

from __future__ import annotations

import pytest

from services.gateway.protobuf_body import PROTOBUF, UnsupportedBody, body_text, decode
from shared.errors import InvalidInput
from tests.kube_protobuf import binding, envelope, length, meta, number

# Bodies as kubectl v1.32 sent them (its -v=9 dump): drain's DeleteOptions, and its generators'
# `create namespace team`, `create priorityclass low --value=-5 --description=d
# --preemption-policy=Never` and `create pdb budget --selector=app=web --min-available=50%`.
DRAIN_DELETE = bytes.fromhex("6b3873000a130a027631120d44656c6574654f7074696f6e7312001a002200")
CREATE_NAMESPACE = bytes.fromhex(
    "6b3873000a0f0a02763112094e616d657370616365121c0a140a047465616d12001a0022002a0032003800420012001a020a001a002200")
CREATE_PRIORITY_CLASS = bytes.fromhex(
    "6b3873000a250a147363686564756c696e672e6b38732e696f2f7631120d5072696f72697479436c617373122c0a130a036c6f7712001a"
    "0022002a0032003800420010fbffffffffffffffff0118002201642a054e657665721a002200")
CREATE_PDB = bytes.fromhex(
    "6b3873000a200a09706f6c6963792f76311213506f6444697372757074696f6e427564676574123f0a160a0662756467657412001a0022"
    "002a0032003800420012190a09080110001a03353025120c0a0a0a0361707012037765621a0a080018002000280030001a002200")


def test_kubectls_own_bodies_read_as_their_json() -> None:
    assert decode(CREATE_NAMESPACE) == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"},
                                        "spec": {}}
    assert decode(CREATE_PRIORITY_CLASS) == {
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "low"}, "value": -5,
        "globalDefault": False, "description": "d", "preemptionPolicy": "Never"}
    assert decode(CREATE_PDB) == {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                                  "metadata": {"name": "budget"},
                                  "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}}}


def test_kubectl_drains_delete_options_are_empty() -> None:
    assert decode(DRAIN_DELETE) == {"apiVersion": "v1", "kind": "DeleteOptions"}
    dry = envelope("v1", "DeleteOptions", number(1, 30) + length(5, "All") + length(4, "Background"))
    assert decode(dry) == {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 30,
                           "dryRun": ["All"], "propagationPolicy": "Background"}


def test_kubectl_create_namespace_priorityclass_and_pdb() -> None:
    namespace = envelope("v1", "Namespace", length(1, meta("team", labels={"env": "", "tier": "web"})) + length(2, b""))
    assert decode(namespace) == {"apiVersion": "v1", "kind": "Namespace",
                                 "metadata": {"name": "team", "labels": {"env": "", "tier": "web"}}, "spec": {}}
    negative = envelope("scheduling.k8s.io/v1", "PriorityClass",
                         length(1, meta("low")) + number(2, -5) + number(3, 0) + length(4, "") + length(5, "Never"))
    assert decode(negative) == {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                "metadata": {"name": "low"}, "value": -5, "globalDefault": False,
                                "preemptionPolicy": "Never"}
    expression = length(1, "tier") + length(2, "In") + length(3, "web")
    selector = length(1, length(1, "app") + length(2, "x")) + length(2, expression)
    spec = (length(1, number(1, 1) + number(2, 0) + length(3, "50%")) + length(2, selector)
            + length(3, number(1, 0) + number(2, 2)))
    pdb = envelope("policy/v1", "PodDisruptionBudget", length(1, meta("p", "team")) + length(2, spec))
    assert decode(pdb)["spec"] == {"minAvailable": "50%", "maxUnavailable": 2, "selector": {
        "matchLabels": {"app": "x"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["web"]}]}}
    assert decode(pdb)["metadata"] == {"name": "p", "namespace": "team"}


def test_other_bodies_are_refused_with_what_to_send() -> None:
    with pytest.raises(UnsupportedBody, match="Pod is read as JSON only, not protobuf; protobuf bodies are read "
                                              "for Binding, DeleteOptions, Namespace, PodDisruptionBudget, "
                                              "PriorityClass"):
        decode(envelope("v1", "Pod", b""))
    with pytest.raises(InvalidInput, match="no k8s"):
        decode(b'{"kind": "Namespace"}')
    with pytest.raises(InvalidInput, match="not a valid Kubernetes protobuf message: a field runs past"):
        decode(envelope("v1", "Namespace", length(1, b"\x0a\x7f")))


def test_json_bodies_are_read_as_text() -> None:
    assert body_text(b'{"kind": "Namespace"}', "application/json") == '{"kind": "Namespace"}'
    assert body_text(DRAIN_DELETE, PROTOBUF) == '{"apiVersion": "v1", "kind": "DeleteOptions"}'


def test_int32_fields_read_their_low_32_bits_signed() -> None:
    five_bytes = bytes([2 << 3]) + bytes.fromhex("fbffffff0f")  # -5 as a 5-byte varint (0xFFFFFFFB)
    assert decode(envelope("scheduling.k8s.io/v1", "PriorityClass", length(1, meta("low")) + five_bytes))[
        "value"] == -5
    assert decode(envelope("scheduling.k8s.io/v1", "PriorityClass", number(2, -5)))["value"] == -5  # ten bytes


def test_another_schedulers_binding_names_its_node() -> None:
    # kube-scheduler's client sends protobuf by default (clientConnection.contentType).
    assert decode(binding("web", "default", "n1"))["target"] == {"kind": "Node", "name": "n1", "apiVersion": "v1"}


def test_out_of_range_and_truncated_values_are_refused_not_crashed_on() -> None:
    far = length(1, length(8, number(1, 2**62)))
    with pytest.raises(InvalidInput, match="outside the years 1 to 9999"):
        decode(envelope("v1", "Namespace", far))
    truncated = length(1, length(1, "n") + bytes([7 << 3 | 5]) + b"\x01\x02")  # a fixed32 cut short
    with pytest.raises(InvalidInput, match="a field runs past the message"):
        decode(envelope("v1", "Namespace", truncated))
