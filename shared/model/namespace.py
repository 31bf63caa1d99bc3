"""v1 Namespace: what the scheduler reads of one is its labels (pod affinity's namespaceSelector)."""

from __future__ import annotations

import msgspec

from .base import K8s
from .meta import ObjectMeta

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
"""The label the API server puts on every namespace: its own name."""


class Namespace(K8s, frozen=True, kw_only=True):
    api_version: str = "v1"
    kind: str = "Namespace"
    metadata: ObjectMeta = ObjectMeta()


def name_labels(name: str) -> dict[str, str]:
    """The label every namespace carries: its own name (all a namespace no object declares has)."""
    return {NAMESPACE_NAME_LABEL: name}


def labelled(ns: Namespace) -> Namespace:
    """The namespace as the API server stores it: labelled with its own name."""
    labels = {**ns.metadata.labels, **name_labels(ns.metadata.name)}
    return msgspec.structs.replace(ns, metadata=msgspec.structs.replace(ns.metadata, labels=labels))
