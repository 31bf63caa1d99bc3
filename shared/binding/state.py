"""The binder's state and decision, pure: no Kafka, no clock (the caller hands `now`).

A binder member owns some node shards (partition k of `nodes`, `binds` and `placements`). For each it
keeps a `NodeShard`: the live nodes as `NodeInfo`s holding the pods committed to them, the PodBound of
every committed pod, and the outcome of every bind request it answered. The same two functions build
that state when a shard is rebuilt from the log and keep it current while binds are handled:

- `NodeShard.apply_node(event)` folds NodeUpserted / NodeDeleted;
- `NodeShard.record(outcome, pod)` folds a PodBound / BindRejected (the binder's own output).

`rebuild_shard` is the fold of a shard's log (nodes, binds for the pod specs, placements), and
`BinderState.decide` answers one BindRequested and records its outcome with `record`: so a member
that takes a shard over after a crash or a rebalance sees exactly what the previous owner committed.

Deletions come from `pods`, which is keyed by pod uid and so not co-partitioned with the shards: a
deleted uid is final (the gateway gives every pod a fresh uid), so the member keeps the set of deleted
uids and "committed pods = bound pods − deleted uids" holds whatever order the topics are read in.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from shared.events import (
    BindRejected,
    BindRequested,
    Envelope,
    NodeDeleted,
    NodeUpserted,
    PodBound,
    derived_id,
    envelope,
)
from shared.framework.node_info import NodeInfo
from shared.framework.pod_info import PodInfo
from shared.framework.runtime import Framework
from shared.model import Pod
from shared.model.config import DEFAULT_SCHEDULER_NAME
from shared.plugins.names import INTER_POD_AFFINITY, NODE_RESOURCES_FIT
from shared.plugins.nodeports import ERR_REASON as PORTS_REASON
from shared.plugins.noderesources.fit import Fit, fits_request

from .admission import is_admission, refusal
from .node_local import anti_affinity_conflicts

log = logging.getLogger(__name__)

NODE_NOT_FOUND = "node not found"
POD_DELETED = "pod has been deleted"


@dataclass
class NodeShard:
    """The committed state of one node shard."""

    nodes: dict[str, NodeInfo] = field(default_factory=dict)
    pods: dict[str, tuple[str, PodInfo]] = field(default_factory=dict)
    """Committed, not deleted pods: uid → (node name, PodInfo). Kept apart from `nodes` so a node that
    is deleted and upserted again still counts the pods bound to it (never over-commit)."""
    bound: dict[str, Envelope] = field(default_factory=dict)
    """uid → the PodBound that committed it: re-sent as is for a repeated request."""
    outcomes: dict[uuid.UUID, Envelope] = field(default_factory=dict)
    """Bind request event id → its outcome: a redelivered request gets the very same answer."""
    logged: set[uuid.UUID] = field(default_factory=set)
    """Bind request event ids whose outcome was read back from the log: answered for good."""
    deleted_nodes: set[str] = field(default_factory=set)
    """Nodes whose latest event folded is a deletion."""

    def apply_node(self, event: NodeUpserted | NodeDeleted) -> None:
        if isinstance(event, NodeDeleted):
            self.nodes.pop(event.node_name, None)
            self.deleted_nodes.add(event.node_name)
            return
        self.deleted_nodes.discard(event.node.metadata.name)
        info = NodeInfo(event.node)
        for node_name, pod in self.pods.values():
            if node_name == info.name:
                info.add_pod(pod)
        self.nodes[info.name] = info

    def record(self, outcome: Envelope, pod: Pod | PodInfo | None,
               deleted: frozenset[str] | set[str] = frozenset()) -> None:
        """Fold one outcome; a PodBound commits `pod` (the request's pod, or its PodInfo where the
        caller made one already) unless it was deleted."""
        if outcome.causation_id is not None:
            self.outcomes[outcome.causation_id] = outcome
        payload = outcome.payload
        if not isinstance(payload, PodBound) or payload.pod_uid in self.bound or payload.pod_uid in deleted:
            return
        self.bound[payload.pod_uid] = outcome
        if pod is None:
            # The request is no longer in the binds log: the pod's size is unknown. Counting it as
            # empty would let later binds over-commit, so this only happens past the log's retention.
            log.warning("binder: PodBound %s without its request; its resources are not counted", payload.pod_uid)
            return
        info = pod if isinstance(pod, PodInfo) else PodInfo(pod)
        self.pods[payload.pod_uid] = (payload.node_name, info)
        node = self.nodes.get(payload.node_name)
        if node is not None:
            node.add_pod(info)

    def forget(self, uid: str) -> bool:
        """The pod was deleted or evicted: free its room. True when it was committed here."""
        self.bound.pop(uid, None)
        entry = self.pods.pop(uid, None)
        if entry is None:
            return False
        node = self.nodes.get(entry[0])
        if node is not None:
            node.remove_pod(entry[1])
        return True


def rebuild_shard(nodes: Iterable[Envelope], binds: Iterable[Envelope], placements: Iterable[Envelope],
                  deleted: frozenset[str] | set[str] = frozenset()) -> NodeShard:
    """The fold of one shard's log, each topic in its partition's order.

    The topics may be read in any order relative to each other: nodes are folded first, the binds
    only supply each PodBound's pod (matched by the PodBound's causation id), and committed pods are
    re-added when their node is upserted.
    """
    requests = {e.event_id: e.payload.pod for e in binds if isinstance(e.payload, BindRequested)}
    shard = NodeShard()
    for e in nodes:
        if isinstance(e.payload, NodeUpserted | NodeDeleted):
            shard.apply_node(e.payload)
    for e in placements:
        if isinstance(e.payload, PodBound | BindRejected):
            shard.record(e, requests.get(e.causation_id) if e.causation_id else None, deleted)
    shard.logged = set(shard.outcomes)
    return shard


@dataclass(frozen=True)
class Ignored:
    """Resources the scheduler's NodeResourcesFit does not count for a profile (its ignoredResources
    and ignoredResourceGroups, and extenders' managedResources with ignoredByScheduler): the
    binder's check must not reject what the scheduler placed for the extenders to account."""

    resources: frozenset[str] = frozenset()
    groups: frozenset[str] = frozenset()


NOTHING_IGNORED = Ignored()


def ignored_by_profile(profiles: Mapping[str, Framework]) -> dict[str, Ignored]:
    """Each profile's (scheduler name's) ignored resources; a profile without NodeResourcesFit
    ignores nothing here, so the binder still keeps every node within its allocatable."""
    out: dict[str, Ignored] = {}
    for name, fwk in profiles.items():
        fit = fwk.plugins.get(NODE_RESOURCES_FIT)
        if isinstance(fit, Fit) and (fit.ignored_resources or fit.ignored_resource_groups):
            out[name] = Ignored(fit.ignored_resources, fit.ignored_resource_groups)
    return out


def anti_affinity_filtered(profiles: Mapping[str, Framework]) -> frozenset[str]:
    """The profiles (scheduler names) whose Filter runs InterPodAffinity: only their pods' binds are
    held to anti-affinity here, so that the binder never refuses what its profile placed."""
    return frozenset(name for name, fwk in profiles.items()
                     if any(p.name == INTER_POD_AFFINITY for p in fwk.filter_plugins))


DEFAULT_ANTI_AFFINITY = frozenset((DEFAULT_SCHEDULER_NAME,))
"""`anti_affinity_filtered` of the default configuration: its one profile filters with InterPodAffinity."""


def unfit_reasons(pod: PodInfo, node: NodeInfo, ignored: Ignored = NOTHING_IGNORED, *,
                  anti_affinity: bool = True) -> list[str]:
    """Why the pod cannot join the node now (resources, pod count, host ports and, with
    `anti_affinity`, required anti-affinity scoped to the node); empty when it fits."""
    reasons = [r.reason for r in fits_request(pod.requests, node, ignored.resources, ignored.groups)]
    if any(node.used_ports.check_conflict(ip, protocol, port) for ip, protocol, port in pod.host_ports):
        reasons.append(PORTS_REASON)
    return reasons + anti_affinity_conflicts(pod, node) if anti_affinity else reasons


@dataclass
class BinderState:
    """A member's shards and the uids deleted cluster-wide."""

    producer: str = "binder"
    shards: dict[int, NodeShard] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)
    ignored: Mapping[str, Ignored] = field(default_factory=dict)
    """Scheduler name → the resources its profile does not count (`ignored_by_profile`)."""
    anti_affinity: frozenset[str] = DEFAULT_ANTI_AFFINITY
    """Scheduler names whose binds are held to anti-affinity scoped to the node
    (`anti_affinity_filtered`); binds of other schedulers' pods are not."""

    def bound_pod(self, uid: str) -> Envelope | None:
        for shard in self.shards.values():
            found = shard.bound.get(uid)
            if found is not None:
                return found
        return None

    def forget(self, uid: str) -> None:
        self.deleted.add(uid)
        for shard in self.shards.values():
            shard.forget(uid)

    def answered_in_log(self, shard_no: int, request_id: uuid.UUID) -> bool:
        """The request's outcome is in the log already (the shard was rebuilt from it): a consumer
        group that starts over from the beginning (its broker lost its offsets) publishes nothing
        again for it."""
        shard = self.shards.get(shard_no)
        return shard is not None and request_id in shard.logged

    def install(self, shard_no: int, shard: NodeShard) -> None:
        # Deletions seen while the shard was being rebuilt still apply.
        for uid in [u for u in shard.pods if u in self.deleted]:
            shard.forget(uid)
        self.shards[shard_no] = shard

    def decide(self, shard_no: int, request: Envelope, now: datetime,
               refused: Callable[[BindRequested], str] | None = None) -> Envelope:
        """The outcome of one BindRequested read from `binds` partition `shard_no` (recorded before
        it is returned, so the next request sees the pod committed). `refused`, asked only when
        the pod fits: a binding extender's error ("" when it bound the pod)."""
        bind = request.payload
        assert isinstance(bind, BindRequested), request.type
        shard = self.shards.setdefault(shard_no, NodeShard())
        known = shard.outcomes.get(request.event_id)
        if known is not None:
            return known
        already = self.bound_pod(bind.pod_uid) if bind.pod_uid not in self.deleted else None
        if already is not None:
            # Never bind twice: the pod's one PodBound answers this request too.
            shard.outcomes[request.event_id] = already
            return already
        info = PodInfo(bind.pod)  # judged, then committed
        outcome = self._judge(shard, request, bind, info, now)
        if refused is not None and isinstance(outcome.payload, PodBound):
            error = refused(bind)
            if error:
                outcome = self._rejected(request, bind, error, now)
        shard.record(outcome, info, self.deleted)
        return outcome

    def _judge(self, shard: NodeShard, request: Envelope, bind: BindRequested, info: PodInfo,
               now: datetime) -> Envelope:
        if bind.pod_uid in self.deleted:
            return self._rejected(request, bind, POD_DELETED, now)
        node = shard.nodes.get(bind.node_name)
        if node is None:
            return self._rejected(request, bind, NODE_NOT_FOUND, now)
        pod = bind.pod
        scheduler = pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME
        ignored = self.ignored.get(scheduler, NOTHING_IGNORED)
        if is_admission(bind.attempt_id):
            refused = refusal(info, node, ignored.resources, ignored.groups)
            if refused is not None:
                return self._rejected(request, bind, refused[1], now, status_reason=refused[0])
        else:
            reasons = unfit_reasons(info, node, ignored, anti_affinity=scheduler in self.anti_affinity)
            if reasons:
                return self._rejected(request, bind, ", ".join(reasons), now)
        bound = PodBound(pod_uid=bind.pod_uid, node_name=bind.node_name, attempt_id=bind.attempt_id)
        return envelope(bound, producer=self.producer, caused_by=request, timestamp=now,
                        event_id=derived_id(request.event_id, "PodBound"))

    def _rejected(self, request: Envelope, bind: BindRequested, reason: str, now: datetime,
                  status_reason: str = "") -> Envelope:
        rejected = BindRejected(pod_uid=bind.pod_uid, node_name=bind.node_name, attempt_id=bind.attempt_id,
                                reason=reason, status_reason=status_reason)
        return envelope(rejected, producer=self.producer, caused_by=request, timestamp=now,
                        event_id=derived_id(request.event_id, "BindRejected"))


def shard_counts(state: BinderState) -> Mapping[int, int]:
    """Committed pods per shard (metrics, logs)."""
    return {k: len(s.pods) for k, s in state.shards.items()}
