"""Kubernetes' protobuf request bodies built by hand, as kubectl's and kube-scheduler's clients send them."""

from __future__ import annotations


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # a negative number as its two's complement, ten bytes
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def length(number: int, payload: bytes | str) -> bytes:
    """A length-delimited field: a string, bytes or a message."""
    data = payload.encode() if isinstance(payload, str) else payload
    return varint(number << 3 | 2) + varint(len(data)) + data


def number(field: int, value: int) -> bytes:
    return varint(field << 3) + varint(value)


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    """The k8s\\0 magic and a runtime.Unknown holding the object's message."""
    return b"k8s\x00" + length(1, length(1, api_version) + length(2, kind)) + length(2, raw) + length(3, "") + \
        length(4, "")


def meta(name: str, namespace: str = "", labels: dict[str, str] | None = None) -> bytes:
    """ObjectMeta as upstream's encoder writes it: empty strings and the zero creation time too."""
    entries = b"".join(length(11, length(1, k) + length(2, v)) for k, v in (labels or {}).items())
    return length(1, name) + length(2, "") + length(3, namespace) + length(8, number(1, 0) + number(2, 0)) + entries


def binding(pod: str, namespace: str, node: str) -> bytes:
    """A pods/binding body naming `node`."""
    target = length(1, "Node") + length(2, "") + length(3, node) + length(4, "") + length(5, "v1")
    return envelope("v1", "Binding", length(1, meta(pod, namespace)) + length(2, target))
