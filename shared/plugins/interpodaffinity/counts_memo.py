"""InterPodAffinity's PreFilter counts and PreScore topology scores, kept per incoming pod and
brought up to date from the NodeInfo change journal instead of recounted over every pod.

Both are sums over nodes of what each node's pods contribute, and a node's share changes only when
its pods do. For pods alike in namespace, labels and spec (a workload's replicas), a memo keeps
each contributing node's share and the totals; the next call recounts only the nodes the journal
names as changed since. Measured on PodAntiAffinity (5,000 nodes, 1,000 pods): the PreFilter counts
were two thirds of the queue service's time, where every pod of a batch is re-checked after the
pods before it were placed, and most of an in-process attempt's.

Used only over a snapshot's own, journaled NodeInfos (not the clones preemption's dry runs
change) and its full node list; anything else is counted afresh by the caller.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Generic, TypeVar

from shared.framework.namespaces import NamespaceLabels
from shared.framework.node_info import NodeInfo, changed_since, journal_end
from shared.framework.pod_info import PodInfo
from shared.framework.snapshot import Snapshot

from .filtering import TopologyCounts, incoming_counter, update_with_anti_affinity_terms
from .scoring import ScoreMap, add_scores, node_share

KEPT_PODS = 64
Counts = tuple[TopologyCounts, TopologyCounts, TopologyCounts]
"""(existing anti-affinity, affinity, anti-affinity) counts, PreFilter's state."""
Share = TypeVar("Share")


class _Sums(Generic[Share]):
    """Per-node shares and their total over a snapshot, kept current from the journal."""

    __slots__ = ("share_of", "add", "cursor", "shares", "total")

    def __init__(self, share_of: Callable[[NodeInfo], Share | None], add: Callable[[Share, Share, int], None],
                 total: Share, nodes: Iterable[NodeInfo]) -> None:
        self.share_of, self.add, self.total = share_of, add, total
        self.cursor = journal_end()
        self.shares: dict[str, Share] = {}
        for info in nodes:
            self._set(info)

    def _set(self, info: NodeInfo) -> None:
        old = self.shares.pop(info.name, None)
        if old is not None:
            self.add(self.total, old, -1)
        new = self.share_of(info)
        if new is not None:
            self.shares[info.name] = new
            self.add(self.total, new, 1)

    def catch_up(self, snapshot: Snapshot) -> bool:
        """Recount the nodes changed since the last call; False when the journal no longer reaches back."""
        changed = changed_since(self.cursor)
        self.cursor = journal_end()
        if changed is None:
            return False
        known = snapshot.node_info_map
        seen: set[int] = set()
        for info in changed:
            if id(info) not in seen and known.get(info.name) is info:
                seen.add(id(info))
                self._set(info)
        return True


class _Memo(Generic[Share]):
    """One `_Sums` per incoming pod identity (and variant), for one snapshot at a time."""

    def __init__(self) -> None:
        self._snapshot: Snapshot | None = None
        self._entries: dict[tuple[object, ...], _Sums[Share]] = {}

    def sums(self, key: tuple[object, ...], snapshot: Snapshot | None, nodes: Sequence[NodeInfo],
             make: Callable[[], _Sums[Share]]) -> _Sums[Share] | None:
        if snapshot is None or nodes is not snapshot.node_info_list or (nodes and nodes[0].is_clone):
            return None
        if snapshot is not self._snapshot:
            self._snapshot, self._entries = snapshot, {}
        entry = self._entries.get(key)
        if entry is None or not entry.catch_up(snapshot):
            if len(self._entries) >= KEPT_PODS:
                self._entries.clear()
            entry = self._entries[key] = make()
        return entry


def _identity(pod: PodInfo, namespaces: NamespaceLabels) -> tuple[object, ...]:
    # The namespaces' labels decide which pods a namespaceSelector selects: a change counts afresh.
    return (pod.namespace, tuple(sorted(pod.labels.items())), pod.signature(), id(namespaces), namespaces.version)


# --- PreFilter -----------------------------------------------------------------------------------


def _counts_share(pod: PodInfo, namespaces: NamespaceLabels) -> Callable[[NodeInfo], Counts | None]:
    ns_labels = namespaces.of(pod.namespace)
    count_incoming = incoming_counter(pod, namespaces)

    def share(info: NodeInfo) -> Counts | None:
        existing: TopologyCounts = {}
        for other in info.pods_with_required_anti_affinity:
            update_with_anti_affinity_terms(existing, other.required_anti_affinity_terms, pod, ns_labels,
                                            info.labels, 1)
        affinity: TopologyCounts = {}
        anti: TopologyCounts = {}
        if count_incoming is not None:
            count_incoming(info, affinity, anti)
        return (existing, affinity, anti) if existing or affinity or anti else None

    return share


def _add_counts(total: Counts, share: Counts, sign: int) -> None:
    for counts, part in zip(total, share):
        for pair, n in part.items():
            v = counts.get(pair, 0) + sign * n
            if v:
                counts[pair] = v
            else:
                counts.pop(pair, None)


class CountsMemo:
    """PreFilter's counts for `pod` over `nodes`, as fresh dictionaries (the caller's state may
    change them); None where the memo does not apply."""

    def __init__(self) -> None:
        self._memo: _Memo[Counts] = _Memo()

    def counts(self, pod: PodInfo, snapshot: Snapshot | None, nodes: Sequence[NodeInfo]) -> Counts | None:
        if snapshot is None:
            return None
        namespaces = snapshot.namespaces
        sums = self._memo.sums(_identity(pod, namespaces), snapshot, nodes,
                               lambda: _Sums(_counts_share(pod, namespaces), _add_counts, ({}, {}, {}), nodes))
        if sums is None:
            return None
        existing, affinity, anti = sums.total
        return dict(existing), dict(affinity), dict(anti)


# --- PreScore ------------------------------------------------------------------------------------


def _scores_sums(pod: PodInfo, all_pods: bool, hard_pod_affinity_weight: int,
                 nodes: Sequence[NodeInfo], namespaces: NamespaceLabels) -> _Sums[ScoreMap]:
    share = node_share(pod, all_pods, hard_pod_affinity_weight, namespaces)
    return _Sums(lambda info: share(info) or None, add_scores, {}, nodes)


class ScoresMemo:
    """PreScore's topology scores for `pod` over every node of `snapshot` (None from `scores`
    where no node contributed, as `topology_scores`; the memo's own None where it does not apply)."""

    def __init__(self) -> None:
        self._memo: _Memo[ScoreMap] = _Memo()

    def scores(self, pod: PodInfo, snapshot: Snapshot | None, all_pods: bool,
               hard_pod_affinity_weight: int) -> tuple[ScoreMap | None] | None:
        if snapshot is None:
            return None
        nodes, namespaces = snapshot.node_info_list, snapshot.namespaces
        sums = self._memo.sums((*_identity(pod, namespaces), all_pods, hard_pod_affinity_weight), snapshot, nodes,
                               lambda: _scores_sums(pod, all_pods, hard_pod_affinity_weight, nodes, namespaces))
        if sums is None:
            return None
        if not sums.shares:
            return (None,)
        return ({key: dict(values) for key, values in sums.total.items()},)
