"""The cluster as the scheduler sees it, folded from the log: one pure fold shared by the queue,
the filter workers and the preemption service, so each evaluates the same state.

A pod counts on a node when it is placed there (PodBound, or submitted with `spec.nodeName`) or
assumed there (a bind in flight), and is neither deleted nor evicted. Assumptions are an overlay:
the queue folds its own BindRequested events into it; a filter worker replaces it with the list a
request carries (`set_assumed`). `positions` records how far each partition has been folded, so a
reader can tell whether it has seen everything the sender of a request had (`reached`).

Nodes are ordered by their first NodeUpserted's timestamp: the order they were applied in, as the
in-process simulator keeps its input order, so both walk nodes (and break ties) alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from itertools import count
from typing import TYPE_CHECKING

import msgspec

from shared.events import (
    BindRejected,
    BindRequested,
    Envelope,
    NamespaceDeleted,
    NamespaceUpserted,
    NodeDeleted,
    NodeUpserted,
    PodBound,
    PodDeleted,
    PodDisruptionBudgetDeleted,
    PodDisruptionBudgetUpserted,
    PodEvicted,
    PodNominated,
    PodSubmitted,
    Position,
    PriorityClassDeleted,
    PriorityClassUpserted,
)
from shared.framework.namespaces import NamespaceLabels
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.snapshot import Snapshot, index_images
from shared.model import Pod, PodDisruptionBudget, PriorityClass
from shared.queue.nominator import Nominator

if TYPE_CHECKING:
    from shared.framework.runtime import Framework

TERMINAL_PHASES = ("Succeeded", "Failed")
Watermark = dict[str, list[int]]
"""Logical topic → the next offset to fold, per partition."""


def bound_copy(pod: Pod, node_name: str) -> Pod:
    """The pod as it is once bound: `spec.nodeName` set, nomination cleared (as the simulator binds)."""
    return msgspec.structs.replace(
        pod,
        spec=msgspec.structs.replace(pod.spec, node_name=node_name),
        status=msgspec.structs.replace(pod.status, nominated_node_name=""),
    )


def reach(watermark: Mapping[str, list[int]]) -> int:
    """How far a watermark reaches, in events: a queue's watermarks only grow, so this orders its
    requests as it made them."""
    return sum(map(sum, watermark.values()))


def point_at(profiles: Iterable[Framework], view: ClusterView) -> None:
    """Point every framework at the view's snapshot and nominated pods (the nominator catches up
    with the pods whose nomination changed only when asked, so callers point again after assuming
    a pod)."""
    snapshot, nominator = view.snapshot(), view.nominator()
    for fwk in profiles:
        fwk.set_snapshot(snapshot)
        fwk.set_nominator(nominator)


def with_nomination(pod: Pod, node_name: str) -> Pod:
    return msgspec.structs.replace(pod, status=msgspec.structs.replace(pod.status, nominated_node_name=node_name))


class ClusterView:
    def __init__(self) -> None:
        self.nodes: dict[str, NodeInfo] = {}
        self._node_order: dict[str, tuple[datetime, str]] = {}
        self.specs: dict[str, Pod] = {}
        """Every submitted, live pod by uid, as submitted (nomination applied)."""
        self.placed: dict[str, str] = {}
        self.assumed: dict[str, str] = {}
        self.deleted: set[str] = set()
        self.refused: set[str] = set()
        """Pods created with `spec.nodeName` that their node refused (`shared.binding.admission`): failed."""
        self.answered: set[str] = set()
        """Attempt ids whose bind has an outcome: a late-read BindRequested is not assumed again."""
        self.nominated: dict[str, str] = {}
        self._decided_at: dict[str, int] = {}
        """Pod uid → the request offset of the latest preemption decision that nominated it or
        cleared its nomination (`_later_decision`)."""
        self.pdbs: dict[str, PodDisruptionBudget] = {}
        self.namespaces = NamespaceLabels()
        """The declared namespaces' labels, shared with every snapshot (always current)."""
        self.priority_classes: dict[str, PriorityClass] = {}
        self.positions: dict[str, dict[int, int]] = {}
        self.version = 0
        """Bumped by every change to nodes or to the pods counted on them."""
        self._on_node: dict[str, tuple[str, PodInfo]] = {}
        self._order: dict[str, tuple[int, datetime | int, str]] = {}
        """A pod's place in its node's pod list: pods running at submission in submission order, then
        pods placed by scheduling in placement order (as the simulator lists them; preemption's
        victim order follows it)."""
        self.evicting: set[str] = set()
        self.nominating: dict[str, str] = {}
        """Preemptions decided but not yet folded (`set_preempting`): victims taken as gone,
        nominations (uid → node, "" for cleared) as made."""
        self._placements = 0
        self._snapshot: Snapshot | None = None
        self._nominator: Nominator | None = None
        self._nominated_infos: dict[str, tuple[Pod, str, PodInfo]] = {}
        """Each pod in the nominator: its spec, node and nominated PodInfo."""
        self._renominate: set[str] = set()
        """Pods whose nomination may have changed since the nominator last caught up."""
        self._nomination_rank: dict[str, int] = {}
        self._nominating_rank: dict[str, int] = {}
        self._ranks = count()
        """Where each pod of `nominated` (and of `nominating`) first came in: the nominator lists a
        node's pods in that order, those of `nominated` first."""

    # --- reading ------------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """The nodes in node-tree order (rebuilt only after the node set changed)."""
        if self._snapshot is None:
            infos = [self.nodes[n] for n in sorted(self.nodes, key=self._node_order.__getitem__)]
            index_images(infos)
            self._snapshot = Snapshot(infos, self.namespaces)
        return self._snapshot

    def holds_nomination(self, uid: str) -> bool:
        """Whether the pod is nominated a node (`nominated`) or by a preemption being decided
        (`nominating`): the nominator holds it."""
        return uid in self.nominated or uid in self.nominating

    def node_of(self, uid: str) -> str | None:
        """Where the pod counts now (placed or assumed), None when it is pending or gone."""
        entry = self._on_node.get(uid)
        return entry[0] if entry else None

    def is_bound(self, uid: str) -> bool:
        return uid in self.placed and uid not in self.deleted

    def unadmitted(self, uid: str) -> bool:
        """A live pod created with `spec.nodeName` that its node has neither admitted nor refused."""
        pod = self.specs.get(uid)
        return (pod is not None and bool(pod.spec.node_name) and pod.status.phase not in TERMINAL_PHASES
                and uid not in self.placed and uid not in self.deleted and uid not in self.refused)

    def pod_info(self, uid: str) -> PodInfo | None:
        entry = self._on_node.get(uid)
        return entry[1] if entry else None

    def nominator(self) -> Nominator:
        """Pending pods with a nomination, for the filter's two-pass check and for preemption.
        Kept up to date pod by pod: only the pods whose nomination may have changed are looked
        at, and a node's stamp changes only when its nominated pods do."""
        if self._nominator is None:
            self._nominator, self._nominated_infos = Nominator(), {}
            self._renominate.update(self.nominated, self.nominating)
        if self._renominate:
            self._catch_up_nominations()
        return self._nominator

    def _catch_up_nominations(self) -> None:
        nominator, infos = self._nominator, self._nominated_infos
        assert nominator is not None
        touched: set[str] = set()
        for uid in sorted(self._renominate):  # one order wherever this view is rebuilt
            node = self.nominating.get(uid) if uid in self.nominating else self.nominated.get(uid)
            pod = self.specs.get(uid)
            wanted = (bool(node) and pod is not None and uid not in self._on_node and uid not in self.evicting
                      and uid not in self.deleted)
            kept = infos.get(uid)
            if kept is not None and wanted and kept[0] is pod and kept[1] == node:
                touched.add(node)  # its place in the order may have changed
                continue
            if kept is not None:
                nominator.delete_nominated_pod_if_exists(kept[2])
                del infos[uid]
            if wanted:
                assert node and pod is not None  # as `wanted` says
                info = PodInfo(with_nomination(pod, node))
                infos[uid] = (pod, node, info)
                nominator.add_nominated_pod(info, node)
                touched.add(node)
        self._renominate.clear()
        for node in touched:
            nominator.order_node(node, self._nomination_order)

    def _nomination_order(self, uid: str) -> tuple[int, int]:
        rank = self._nomination_rank.get(uid)
        return (0, rank) if rank is not None else (1, self._nominating_rank.get(uid, -1))

    def _nominate(self, uid: str, node: str) -> None:
        if uid in self.deleted:
            return  # decided before the deletion was read: a deleted pod is never nominated
        if uid not in self.nominated:
            self._nomination_rank[uid] = next(self._ranks)
        self.nominated[uid] = node
        self._renominate.add(uid)

    def _later_decision(self, uid: str, request_at: int, *, including_same: bool) -> bool:
        """Whether a nomination event of the preemption decided at `request_at` is to be applied:
        of the pod's nominations and evictions made for it, the latest decision's holds, whichever
        partition was read first. An event with no known decision (-1) is applied as it comes."""
        if request_at < 0:
            return including_same
        latest = self._decided_at.get(uid, -1)
        if request_at < latest or (request_at == latest and not including_same):
            return False
        self._decided_at[uid] = request_at
        return True

    def _unnominate(self, uid: str) -> None:
        self._renominate.add(uid)
        self._nomination_rank.pop(uid, None)
        self.nominated.pop(uid, None)

    def reached(self, watermark: Mapping[str, list[int]]) -> bool:
        for topic, offsets in watermark.items():
            mine = self.positions.get(topic, {})
            if any(mine.get(p, 0) < offset for p, offset in enumerate(offsets)):
                return False
        return True

    def past(self, watermark: Mapping[str, list[int]]) -> Watermark:
        """This view's positions of the watermark's topics when it has folded beyond the watermark
        anywhere (so it is not the state the watermark names); empty when it has not."""
        for topic, offsets in watermark.items():
            mine = self.positions.get(topic, {})
            if any(mine.get(p, 0) > offset for p, offset in enumerate(offsets)):
                return self.watermark({t: len(o) for t, o in watermark.items()})
        return {}

    def off(self, watermark: Mapping[str, list[int]]) -> Watermark:
        """This view's positions of the watermark's topics when they are not the watermark's (past
        it, or short of it); empty when the view is exactly at it."""
        mine = self.watermark({t: len(o) for t, o in watermark.items()})
        return {} if mine == {t: list(o) for t, o in watermark.items()} else mine

    def watermark(self, partitions: Mapping[str, int]) -> Watermark:
        """Positions of these topics (logical name → partition count) as a request carries them."""
        return {t: [self.positions.get(t, {}).get(p, 0) for p in range(n)] for t, n in partitions.items()}

    # --- folding ------------------------------------------------------------------------------

    def apply(self, env: Envelope, position: Position | None = None) -> None:
        if position is not None:
            at = self.positions.setdefault(position.topic, {})
            if position.offset < at.get(position.partition, 0):
                return  # folded already
            at[position.partition] = position.offset + 1
        self.apply_payload(env.payload, env.timestamp)

    def apply_payload(self, p: object, at: datetime) -> None:
        match p:
            case NodeUpserted():
                self._upsert_node(p, at)
            case NodeDeleted():
                self._delete_node(p.node_name)
            case PodSubmitted():
                self._submit(p.pod, at)
            case PodDeleted() | PodEvicted():
                self.deleted.add(p.uid)
                self._unnominate(p.uid)
                self._sync(p.uid)
                if (isinstance(p, PodEvicted) and p.preemptor_uid not in self.deleted
                        and p.preemptor_uid not in self.placed
                        and self._later_decision(p.preemptor_uid, p.request_at, including_same=False)):
                    self._nominate(p.preemptor_uid, p.node_name)
            case PodNominated():
                if not self._later_decision(p.uid, p.request_at, including_same=True):
                    pass  # an eviction of a later decision nominated the pod already
                elif not p.node_name:
                    self._unnominate(p.uid)
                else:
                    self._nominate(p.uid, p.node_name)
            case PodBound():
                self.answered.add(p.attempt_id)
                self.placed[p.pod_uid] = p.node_name
                self.assumed.pop(p.pod_uid, None)
                self._unnominate(p.pod_uid)
                self._sync(p.pod_uid)
            case BindRejected():
                self.answered.add(p.attempt_id)
                if p.status_reason:
                    self.refused.add(p.pod_uid)
                if self.assumed.get(p.pod_uid) == p.node_name:
                    del self.assumed[p.pod_uid]
                    self._sync(p.pod_uid)
            case BindRequested():
                if p.attempt_id not in self.answered and p.pod_uid not in self.placed:
                    self.assume(p.pod_uid, p.node_name)
            case PriorityClassUpserted():
                self.priority_classes[p.priority_class.metadata.name] = p.priority_class
            case PriorityClassDeleted():
                self.priority_classes.pop(p.name, None)
            case PodDisruptionBudgetUpserted():
                self.pdbs[f"{p.pdb.metadata.namespace}/{p.pdb.metadata.name}"] = p.pdb
            case PodDisruptionBudgetDeleted():
                self.pdbs.pop(f"{p.namespace}/{p.name}", None)
            case NamespaceUpserted():
                self.namespaces.upsert(p.namespace)
            case NamespaceDeleted():
                self.namespaces.delete(p.name)

    def assume(self, uid: str, node_name: str) -> None:
        self.assumed[uid] = node_name
        self._sync(uid)

    def forget(self, uid: str) -> None:
        if self.assumed.pop(uid, None) is not None:
            self._sync(uid)

    def set_assumed(self, assumed: Iterable[tuple[str, str]]) -> None:
        """Replace the overlay with a request's assumptions (pod uid, node)."""
        wanted = dict(assumed)
        for uid in [u for u in self.assumed if u not in wanted]:
            del self.assumed[uid]
            self._sync(uid)
        for uid, node in wanted.items():
            if self.assumed.get(uid) != node:
                self.assumed[uid] = node
                self._sync(uid)

    def set_preempting(self, evicting: Iterable[str], nominating: Mapping[str, str]) -> None:
        """Replace the overlay of preemptions decided but not yet in the log this view folded.
        Nominations new to the overlay are listed on their nodes after those already there, in
        the order given (replay passes the overlay each decision recorded, so it lists them alike)."""
        wanted = set(evicting)
        changed, self.evicting = wanted ^ self.evicting, wanted
        for uid in changed:
            self._sync(uid, renumber=False)  # a victim put back keeps its place in its node's list
        nominating = dict(nominating)
        if nominating != self.nominating:
            before, self.nominating = self.nominating, nominating
            self._renominate.update(uid for uid in before.keys() | nominating.keys()
                                    if before.get(uid) != nominating.get(uid))
            for uid in before.keys() - nominating.keys():
                del self._nominating_rank[uid]
            for uid in nominating:  # in the overlay's order, which the decision records
                if uid not in before:
                    self._nominating_rank[uid] = next(self._ranks)

    # --- internals ----------------------------------------------------------------------------

    def _upsert_node(self, p: NodeUpserted, at: datetime) -> None:
        name = p.node.metadata.name
        self._node_order.setdefault(name, (at, name))
        info = NodeInfo(p.node)
        old = self.nodes.get(name)
        if old is not None:
            for pi in old.pods:
                info.add_pod(pi)
        else:
            for uid, (node, pi) in self._on_node.items():
                if node == name:
                    self._add_in_order(info, pi)
        self.nodes[name] = info
        self._changed(nodes=True)

    def _delete_node(self, name: str) -> None:
        if self.nodes.pop(name, None) is not None:
            self._node_order.pop(name, None)
            self._changed(nodes=True)

    def _submit(self, pod: Pod, at: datetime) -> None:
        uid = pod.metadata.uid
        if uid in self.deleted:
            return
        self.specs[uid] = pod
        if pod.spec.node_name and pod.status.phase not in TERMINAL_PHASES:
            # It counts on its node once the node admitted it (its PodBound), listed there among
            # the pods running at submission.
            self._order[uid] = (0, at, uid)
        if pod.status.nominated_node_name:
            if uid not in self.nominated:
                self._nominate(uid, pod.status.nominated_node_name)
        self._sync(uid)

    def _sync(self, uid: str, *, renumber: bool = True) -> None:
        """Make the NodeInfos agree with where the pod should count."""
        gone = uid in self.deleted or uid in self.evicting
        target = None if gone else (self.placed.get(uid) or self.assumed.get(uid))
        pod = self.specs.get(uid)
        if pod is None:
            target = None
        current = self._on_node.get(uid)
        if current is not None and current[0] == target:
            return
        if current is not None:
            node = self.nodes.get(current[0])
            if node is not None:
                node.remove_pod(current[1])
            del self._on_node[uid]
        if target is not None and pod is not None:
            info = PodInfo(bound_copy(pod, target))
            self._on_node[uid] = (target, info)
            if uid not in self._order or (self._order[uid][0] == 1 and renumber):
                self._placements += 1
                self._order[uid] = (1, self._placements, uid)
            node = self.nodes.get(target)
            if node is not None:
                self._add_in_order(node, info)
        if self.holds_nomination(uid):
            self._renominate.add(uid)  # a nominated pod counts as nominated only while on no node
        self._changed()

    def _add_in_order(self, node: NodeInfo, info: PodInfo) -> None:
        node.add_pod(info)
        pods = node.pods
        if len(pods) > 1 and self._key(pods[-1]) < self._key(pods[-2]):
            pods.sort(key=self._key)
            node.pods_with_affinity.sort(key=self._key)
            node.pods_with_required_anti_affinity.sort(key=self._key)

    def _key(self, info: PodInfo) -> tuple[int, str, str]:
        kind, at, uid = self._order.get(info.uid, (1, 0, info.uid))
        return (kind, at.isoformat() if isinstance(at, datetime) else f"{at:020}", uid)

    def _changed(self, *, nodes: bool = False) -> None:
        self.version += 1
        if nodes:
            self._snapshot = None
