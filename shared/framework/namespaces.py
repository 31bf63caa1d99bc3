"""The cluster's namespaces as the scheduler's namespace lister gives them: their labels, which pod
(anti-)affinity terms' namespaceSelector is matched against (upstream GetNamespaceLabelsSnapshot).

A namespace no Namespace object declares is taken as the API server creates every namespace:
labelled with its own name only (`kubernetes.io/metadata.name`). `version` changes with every
change, so results computed from the labels are remembered under it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from shared.model.namespace import Namespace, labelled, name_labels


class NamespaceLabels:
    def __init__(self, namespaces: Iterable[Namespace] = ()) -> None:
        self._labels: dict[str, dict[str, str]] = {}
        self.version = 0
        for ns in namespaces:
            self.upsert(ns)

    def upsert(self, ns: Namespace) -> None:
        labels = dict(labelled(ns).metadata.labels)
        if self._labels.get(ns.metadata.name) != labels:
            self._labels[ns.metadata.name] = labels
            self.version += 1

    def delete(self, name: str) -> None:
        if self._labels.pop(name, None) is not None:
            self.version += 1

    def of(self, name: str) -> Mapping[str, str]:
        """The labels of namespace `name`."""
        labels = self._labels.get(name)
        return labels if labels is not None else name_labels(name)


NO_NAMESPACES = NamespaceLabels()
"""For a snapshot of a cluster that declares no namespace (every one labelled with its name)."""
