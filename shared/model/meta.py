"""ObjectMeta and label selectors (apimachinery meta/v1)."""

from __future__ import annotations

from .base import K8s


class OwnerReference(K8s, frozen=True, kw_only=True):
    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None


class ObjectMeta(K8s, frozen=True, kw_only=True):
    name: str = ""
    generate_name: str = ""
    namespace: str = ""
    uid: str = ""
    resource_version: str = ""
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    owner_references: list[OwnerReference] = []


class LabelSelectorRequirement(K8s, frozen=True, kw_only=True):
    key: str
    operator: str
    values: list[str] = []


class LabelSelector(K8s, frozen=True, kw_only=True):
    match_labels: dict[str, str] = {}
    match_expressions: list[LabelSelectorRequirement] = []
