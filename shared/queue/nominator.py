"""The nominator: pods nominated to a node while they wait for preemption victims to leave
(upstream backend/queue/nominator.go).

Per node, nominated pods are kept in insertion order, as upstream's per-node slices; filters
that account for nominated pods see them in that order. Every change is logged by node name, so
an index over the nodes follows the nominations without reading them all again.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from itertools import count
from typing import Any

from shared.framework.pod_info import PodInfo

# Stamps are unique across every Nominator of the process, so a stamp read from one never
# equals a stamp of another's different pods.
_stamps = count(1)
LOG_KEEP = 4096  # changes a reader may fall behind by before it must read every nomination again


class Nominator:
    __slots__ = ("_pods_by_node", "_node_of", "_stamp", "_log", "_log_base")

    def __init__(self) -> None:
        # node name -> uid -> PodInfo; dicts keep insertion order, like upstream's slices.
        self._pods_by_node: dict[str, dict[str, PodInfo]] = {}
        self._node_of: dict[str, str] = {}
        self._stamp: dict[str, int] = {}  # node name -> stamp of its nominated pods as they are now
        self._log: list[str] = []  # the node of each change; positions are absolute from _log_base
        self._log_base = 0

    def add_nominated_pod(self, pod_info: PodInfo, node_name: str | None = None) -> None:
        """Nominate `pod_info` to `node_name`; without a node name, to the node its
        status.nominatedNodeName names (upstream's ModeNoop), or nowhere when that is empty.

        A pod is never stored twice: any earlier nomination is dropped first.
        """
        self.delete_nominated_pod_if_exists(pod_info)
        target = node_name or pod_info.pod.status.nominated_node_name
        if not target:
            return
        if pod_info.pod.spec.node_name:
            return  # already bound: nothing to reserve
        self._node_of[pod_info.uid] = target
        self._pods_by_node.setdefault(target, {})[pod_info.uid] = pod_info
        self._changed(target)

    def delete_nominated_pod_if_exists(self, pod: PodInfo) -> None:
        node = self._node_of.pop(pod.uid, None)
        if node is None:
            return
        pods = self._pods_by_node.get(node)
        if pods is not None:
            pods.pop(pod.uid, None)
            if not pods:
                del self._pods_by_node[node]
        self._changed(node)

    def _changed(self, node: str) -> None:
        self._stamp[node] = next(_stamps)
        self._logged(node)

    def _logged(self, node: str) -> None:
        self._log.append(node)
        if len(self._log) > 2 * LOG_KEEP:
            del self._log[:LOG_KEEP]
            self._log_base += LOG_KEEP

    def update_nominated_pod(self, old: PodInfo, new: PodInfo) -> None:
        """Swap the stored pod for its newer version.

        An update that carries no nominatedNodeName on either side keeps the in-memory nomination
        (the scheduler may have nominated the pod before the API update reached it).
        """
        keep = ""
        if not old.pod.status.nominated_node_name and not new.pod.status.nominated_node_name:
            keep = self._node_of.get(old.uid, "")
        self.delete_nominated_pod_if_exists(old)
        self.add_nominated_pod(new, keep or None)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return list(self._pods_by_node.get(node_name, {}).values())

    def nodes_with_nominations(self) -> Collection[str]:
        """The nodes some pod is nominated to (a live view: it follows later nominations)."""
        return self._pods_by_node.keys()

    @property
    def stamps(self) -> Mapping[str, int]:
        """Node name -> a stamp equal for two reads only when the node's nominated pods are the
        same PodInfos in the same order (absent before any pod was nominated to it). A live view."""
        return self._stamp

    def order_node(self, node_name: str, key: Callable[[str], Any]) -> None:
        """List the pods nominated to `node_name` in the order of `key(uid)` (a caller that keeps
        nominations in an order of its own, whatever order they were made in)."""
        pods = self._pods_by_node.get(node_name)
        if pods is None or len(pods) < 2:
            return
        ordered = sorted(pods, key=key)
        if ordered != list(pods):
            self._pods_by_node[node_name] = {uid: pods[uid] for uid in ordered}
            self._changed(node_name)

    @property
    def version(self) -> int:
        """How many changes were logged: `changed_since` takes it back."""
        return self._log_base + len(self._log)

    def changed_since(self, version: int) -> list[str] | None:
        """The nodes whose nominations changed after `version` (repeats possible), or None when
        the log no longer reaches back that far."""
        start = version - self._log_base
        return None if start < 0 else self._log[start:]

    def nominated_node_of(self, uid: str) -> str | None:
        return self._node_of.get(uid)

    def __len__(self) -> int:
        return len(self._node_of)


__all__ = ["Nominator"]
