"""A consistent view of the cluster for one scheduling cycle (upstream cache.Snapshot).

Nodes are listed in upstream's node-tree order: zones in the order they first appear, one node
from each zone in turn, so that evaluating a prefix of the list spreads across zones.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import count

import numpy as np
import numpy.typing as npt

from .namespaces import NO_NAMESPACES, NamespaceLabels
from .node_info import ImageStateSummary, NodeInfo, affinity_generation

ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
LEGACY_ZONE_LABEL = "failure-domain.beta.kubernetes.io/zone"
LEGACY_REGION_LABEL = "failure-domain.beta.kubernetes.io/region"


def zone_key(labels: dict[str, str]) -> str:
    """utilnode.GetZoneKey: region + ":\\x00:" + zone, "" when the node has neither."""
    region = labels.get(REGION_LABEL) or labels.get(LEGACY_REGION_LABEL, "")
    zone = labels.get(ZONE_LABEL) or labels.get(LEGACY_ZONE_LABEL, "")
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


def node_tree_order(infos: Iterable[NodeInfo]) -> list[NodeInfo]:
    zones: dict[str, list[NodeInfo]] = {}
    for info in infos:
        zones.setdefault(zone_key(info.labels), []).append(info)
    ordered: list[NodeInfo] = []
    columns = list(zones.values())
    depth = max((len(c) for c in columns), default=0)
    for i in range(depth):
        for column in columns:
            if i < len(column):
                ordered.append(column[i])
    return ordered


def normalized_image_name(name: str) -> str:
    """An image name without tag or digest gets ":latest", as the scheduler's image index does."""
    last = name.rsplit("/", 1)[-1]
    if ":" not in last and "@" not in last:
        return name + ":latest"
    return name


def index_images(infos: list[NodeInfo]) -> None:
    """Fill every node's image_states with sizes and the count of nodes holding each image."""
    holders: dict[str, int] = {}
    per_node: list[dict[str, int]] = []
    for info in infos:
        sizes: dict[str, int] = {}
        for image in info.node.status.images:
            for name in image.names:
                sizes[name] = image.size_bytes  # as the node reports it; pods' images are normalised
        per_node.append(sizes)
        for name in sizes:
            holders[name] = holders.get(name, 0) + 1
    for info, sizes in zip(infos, per_node):
        info.image_states = {n: ImageStateSummary(s, holders[n]) for n, s in sizes.items()}


_serials = count(1)


class Snapshot:
    """The node infos in node-tree order plus the indexes plugins ask for."""

    __slots__ = ("node_info_list", "node_info_map", "_with_affinity", "_with_required_anti_affinity", "_version",
                 "serial", "names", "_label_ids", "_position", "namespaces")

    def __init__(self, infos: Iterable[NodeInfo], namespaces: NamespaceLabels = NO_NAMESPACES) -> None:
        self.serial = next(_serials)
        self.namespaces = namespaces
        """The cluster's namespaces' labels (the owner of the snapshot keeps them current)."""
        """Unique per snapshot: results that depend on its fixed indexes are remembered under it."""
        self.node_info_list = node_tree_order(infos)
        self.node_info_map = {i.name: i for i in self.node_info_list}
        self.names = list(self.node_info_map)
        """The nodes' names in node-tree order."""
        self._position: dict[str, int] | None = None
        self._label_ids: dict[tuple[str, ...], tuple[npt.NDArray[np.intp], list[tuple[str | None, ...]]]] = {}
        self._version = -1
        self._with_affinity: list[NodeInfo] = []
        self._with_required_anti_affinity: list[NodeInfo] = []

    def num_nodes(self) -> int:
        return len(self.node_info_list)

    def get(self, name: str) -> NodeInfo | None:
        return self.node_info_map.get(name)

    def position(self) -> dict[str, int]:
        """Node name → its place in `names`."""
        if self._position is None:
            self._position = {name: i for i, name in enumerate(self.names)}
        return self._position

    def label_ids(self, keys: tuple[str, ...]) -> tuple[npt.NDArray[np.intp], list[tuple[str | None, ...]]]:
        """Per node (in order), an id of its values of the labels `keys` (None: no such label),
        and each id's values: the nodes' labels are fixed for a snapshot's life."""
        kept = self._label_ids.get(keys)
        if kept is None:
            combos: dict[tuple[str | None, ...], int] = {}
            ids = np.fromiter((combos.setdefault(tuple([info.labels.get(k) for k in keys]), len(combos))
                               for info in self.node_info_list), dtype=np.intp, count=len(self.node_info_list))
            kept = self._label_ids[keys] = (ids, list(combos))
        return kept

    def _refresh(self) -> None:
        version = affinity_generation()
        if version != self._version:
            self._with_affinity = [i for i in self.node_info_list if i.pods_with_affinity]
            self._with_required_anti_affinity = [i for i in self.node_info_list if i.pods_with_required_anti_affinity]
            self._version = version

    def surely_without_affinity(self) -> bool:
        """True when no node has a pod with (anti-)affinity, as far as known without walking the
        nodes again: the lists, built on first use, hold while no such pod came or went anywhere
        (False, not a walk, once one did: where such pods keep coming, a walk per call would cost
        more than it saves)."""
        if self._version == -1:
            self._refresh()
        return self._version == affinity_generation() and not self._with_affinity

    def have_pods_with_affinity_list(self) -> list[NodeInfo]:
        self._refresh()
        return self._with_affinity

    def have_pods_with_required_anti_affinity_list(self) -> list[NodeInfo]:
        self._refresh()
        return self._with_required_anti_affinity
