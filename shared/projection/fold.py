"""Folding events into the read model: the one definition the projector and replay both use.

`apply(model, envelope)` changes the rows one event touches and returns their keys; `fold(events)`
applies a whole history. The projector loads just the rows `keys_for` names, applies the same
function, and writes the changed rows back, so the Postgres projection equals the fold of the event
store by construction (ARCHITECTURE §5, invariant 3).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime

import msgspec

from shared.events import (
    AnyEvent,
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
    PreemptionDecided,
    PriorityClassDeleted,
    PriorityClassUpserted,
    SchedulingAttempted,
)

from .rows import (
    AttemptRow,
    BindingRow,
    BindingState,
    NamespaceRow,
    NodeRow,
    PdbRow,
    PodPhase,
    PodRow,
    PreemptionRow,
    PriorityClassRow,
    ReadModel,
    Row,
    RowKey,
)

__all__ = ["apply", "derive_pod", "fold", "keys_for"]

_replace = msgspec.structs.replace
_STATE_RANK: dict[BindingState, int] = {"Requested": 0, "Bound": 1, "Rejected": 1}


def keys_for(envelope: Envelope) -> list[RowKey]:
    """The rows applying `envelope` may read or write (what a store must load first)."""
    p = envelope.payload
    match p:
        case NodeUpserted():
            return [("nodes", p.node.metadata.name)]
        case NodeDeleted():
            return [("nodes", p.node_name)]
        case PodSubmitted():
            return [("pods", p.pod.metadata.uid)]
        case PodDeleted() | PodNominated() | PodEvicted():
            return [("pods", p.uid)]
        case PodBound():
            return [("pods", p.pod_uid), ("bindings", (p.pod_uid, p.attempt_id))]
        case BindRejected() if p.status_reason:
            return [("pods", p.pod_uid), ("bindings", (p.pod_uid, p.attempt_id))]
        case BindRequested() | BindRejected():
            return [("bindings", (p.pod_uid, p.attempt_id))]
        case SchedulingAttempted():
            return [("pods", p.pod_uid), ("attempts", (p.pod_uid, p.attempt))]
        case PreemptionDecided():
            return [("preemptions", envelope.event_id)]
        case PriorityClassUpserted():
            return [("priority_classes", p.priority_class.metadata.name)]
        case PriorityClassDeleted():
            return [("priority_classes", p.name)]
        case NamespaceUpserted():
            return [("namespaces", p.namespace.metadata.name)]
        case NamespaceDeleted():
            return [("namespaces", p.name)]
        case PodDisruptionBudgetUpserted():
            return [("pdbs", (p.pdb.metadata.namespace, p.pdb.metadata.name))]
        case PodDisruptionBudgetDeleted():
            return [("pdbs", (p.namespace, p.name))]
    return []


def apply(model: ReadModel, envelope: Envelope) -> set[RowKey]:
    """Apply one event to `model` in place; return the keys of the rows it changed or removed."""
    changed: set[RowKey] = set()
    for key in keys_for(envelope):
        before = model.get(key)
        after = _next_row(key, before, envelope.payload, envelope)
        if after != before:
            model.put(key, after)
            changed.add(key)
    return changed


def fold(events: Iterable[Envelope]) -> ReadModel:
    """The read model after `events`, in order; an event id seen before is skipped."""
    model = ReadModel()
    seen: set[uuid.UUID] = set()
    for envelope in events:
        if envelope.event_id in seen:
            continue
        seen.add(envelope.event_id)
        apply(model, envelope)
    return model


def derive_pod(row: PodRow) -> PodRow:
    """Recompute the derived columns (`phase`, `node_name`) from the stored ones."""
    node_name = row.bound_node or row.spec_node_name
    # A pod created with spec.nodeName is Bound once its node admitted it (PodBound), Failed if refused.
    phase: PodPhase = "Deleted" if row.deleted else (
        "Bound" if row.bound_node else "Failed" if row.failed_reason else "Pending")
    # A bound pod's nomination is spent (the scheduler clears it when it binds), whichever of the
    # two events was folded first.
    nominated = "" if row.bound_node else row.nominated_node_name
    if row.phase == phase and row.node_name == node_name and row.nominated_node_name == nominated:
        return row
    return _replace(row, phase=phase, node_name=node_name, nominated_node_name=nominated)


def _next_row(key: RowKey, row: Row | None, p: AnyEvent, env: Envelope) -> Row | None:
    table = key[0]
    if table == "nodes":
        return _node(row, p, env.timestamp)  # type: ignore[arg-type]  # the nodes table holds NodeRows
    if table == "pods":
        pod = row if isinstance(row, PodRow) else PodRow(uid=str(key[1]))
        return derive_pod(_pod(pod, p, env))
    if table == "bindings":
        return _binding(row, p, env.timestamp)  # type: ignore[arg-type]  # the bindings table holds BindingRows
    if table == "attempts" and isinstance(p, SchedulingAttempted):
        return AttemptRow(pod_uid=p.pod_uid, attempt=p.attempt, profile=p.profile, node_name=p.node_name,
                          message=p.message, seed=p.seed, config_hash=p.config_hash, event_id=env.event_id,
                          attempted_at=env.timestamp)
    if table == "preemptions" and isinstance(p, PreemptionDecided):
        return PreemptionRow(event_id=env.event_id, preemptor_uid=p.preemptor_uid, nominated_node=p.nominated_node,
                             victims=list(p.victims), message=p.message, decided_at=env.timestamp)
    if table in ("priority_classes", "pdbs", "namespaces"):
        return _policy(row, p, env.timestamp)
    return row


def _policy(row: Row | None, p: AnyEvent, at: datetime) -> Row | None:
    match p:
        case PriorityClassUpserted(priority_class=pc):
            return PriorityClassRow(name=pc.metadata.name, priority_class=pc, updated_at=at)
        case PodDisruptionBudgetUpserted(pdb=pdb):
            return PdbRow(namespace=pdb.metadata.namespace, name=pdb.metadata.name, pdb=pdb, updated_at=at)
        case NamespaceUpserted(namespace=ns):
            return NamespaceRow(name=ns.metadata.name, namespace=ns, updated_at=at)
        case PriorityClassDeleted() | PodDisruptionBudgetDeleted() | NamespaceDeleted():
            return None
    return row


def _node(row: NodeRow | None, p: AnyEvent, at: datetime) -> NodeRow | None:
    if isinstance(p, NodeUpserted):
        return NodeRow(name=p.node.metadata.name, node=p.node, updated_at=at)
    if isinstance(p, NodeDeleted):
        return None
    return row


def _pod(row: PodRow, p: AnyEvent, env: Envelope) -> PodRow:
    at = env.timestamp
    match p:
        case PodSubmitted(pod=pod):
            meta = pod.metadata
            return _replace(row, namespace=meta.namespace, name=meta.name, pod=pod, spec_node_name=pod.spec.node_name,
                            submitted_at=at, nominated_node_name=pod.status.nominated_node_name)
        case PodDeleted():
            return _replace(row, namespace=row.namespace or p.namespace, name=row.name or p.name,
                            deleted=True, deleted_at=row.deleted_at or at)
        case PodNominated():
            return _replace(row, nominated_node_name=p.node_name)
        case PodEvicted():
            return _replace(row, deleted=True, deleted_at=row.deleted_at or at, preempted_by=p.preemptor_uid,
                            preempted_on=p.node_name)
        case PodBound():
            newer = row.bound_at is None or (at, str(env.event_id)) > (row.bound_at, str(row.bound_event_id))
            if newer:
                return _replace(row, bound_node=p.node_name, bound_at=at, bound_event_id=env.event_id)
            return row
        case BindRejected():
            return _replace(row, failed_reason=p.status_reason, failed_message=p.reason)
        case SchedulingAttempted():
            if p.attempt >= row.last_attempt:
                return _replace(row, last_attempt=p.attempt, message=p.message)
            return row
    return row


def _binding(row: BindingRow | None, p: AnyEvent, at: datetime) -> BindingRow | None:
    match p:
        case BindRequested():
            base = row or BindingRow(pod_uid=p.pod_uid, attempt_id=p.attempt_id, node_name=p.node_name)
            return _replace(base, seed=p.seed, requested_at=at)
        case PodBound() | BindRejected():
            base = row or BindingRow(pod_uid=p.pod_uid, attempt_id=p.attempt_id, node_name=p.node_name)
            state: BindingState = "Bound" if isinstance(p, PodBound) else "Rejected"
            if _STATE_RANK[state] < _STATE_RANK[base.state]:
                return base
            reason = p.reason if isinstance(p, BindRejected) else None
            return _replace(base, node_name=p.node_name, state=state, reason=reason, decided_at=at)
    return row
