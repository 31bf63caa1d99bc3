"""The read model's rows: what Postgres holds for reads, and what folding the event store yields.

Each column is written by events of one topic only (or merged by a rule that does not depend on
arrival order), because the projector consumes topics in parallel: a pod's PodBound (placements,
keyed by node) may be applied before its PodSubmitted (pods, keyed by uid). A row can therefore start
as a stub that a later event completes, and the result is the same in any interleaving.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, NamedTuple, TypeAlias

import msgspec

from shared.events import PodRef
from shared.model import Namespace, Node, Pod, PodDisruptionBudget, PriorityClass

PodPhase: TypeAlias = Literal["Pending", "Bound", "Failed", "Deleted"]
BindingState: TypeAlias = Literal["Requested", "Bound", "Rejected"]


class Row(msgspec.Struct, frozen=True, kw_only=True):
    pass


class NodeRow(Row, frozen=True, kw_only=True):
    name: str
    node: Node
    updated_at: datetime


class PodRow(Row, frozen=True, kw_only=True):
    """A pod as the cluster sees it. `phase` and `node_name` are derived (see `derive_pod`)."""

    uid: str
    # written by the pods topic
    namespace: str = ""
    name: str = ""
    pod: Pod | None = None
    """Written by PodSubmitted and read by nothing the fold derives (see `spec_node_name`): a store
    may load a row without it and keep the stored one when writing the row back."""
    spec_node_name: str = ""  # the pod's spec.nodeName, for the derived `node_name`
    submitted_at: datetime | None = None
    deleted: bool = False
    deleted_at: datetime | None = None
    preempted_by: str | None = None
    preempted_on: str | None = None  # the eviction's node; a victim whose bind was in flight never had one bound
    nominated_node_name: str = ""
    # written by the placements topic; last writer by (timestamp, event id) wins
    bound_node: str = ""
    bound_at: datetime | None = None
    bound_event_id: uuid.UUID | None = None
    failed_reason: str | None = None  # a pod created on a node that refused it: the kubelet's reason
    failed_message: str | None = None  # and message
    # written by the decisions topic
    last_attempt: int = 0
    message: str | None = None
    # derived from the columns above
    phase: PodPhase = "Pending"
    node_name: str = ""


class AttemptRow(Row, frozen=True, kw_only=True):
    pod_uid: str
    attempt: int
    profile: str
    node_name: str | None
    message: str | None
    seed: int
    config_hash: str
    event_id: uuid.UUID
    attempted_at: datetime


class BindingRow(Row, frozen=True, kw_only=True):
    """One bind attempt: requested by the queue, then bound or rejected by the node's binder."""

    pod_uid: str
    attempt_id: str
    node_name: str
    state: BindingState = "Requested"
    seed: int | None = None
    reason: str | None = None
    requested_at: datetime | None = None
    decided_at: datetime | None = None


class PreemptionRow(Row, frozen=True, kw_only=True):
    event_id: uuid.UUID
    preemptor_uid: str
    nominated_node: str
    victims: list[PodRef] = []
    message: str = ""
    decided_at: datetime


class PriorityClassRow(Row, frozen=True, kw_only=True):
    name: str
    priority_class: PriorityClass
    updated_at: datetime


class NamespaceRow(Row, frozen=True, kw_only=True):
    name: str
    namespace: Namespace
    updated_at: datetime


class PdbRow(Row, frozen=True, kw_only=True):
    namespace: str
    name: str
    pdb: PodDisruptionBudget
    updated_at: datetime


class PodState(NamedTuple):
    """A pod's row without its spec: what a listing of thousands needs."""

    uid: str
    namespace: str
    name: str
    node_name: str
    message: str | None
    deleted: bool
    preempted_by: str | None
    phase: str = ""
    """Pending, Bound, Failed or Deleted (`derive_pod`)."""


AttemptKey: TypeAlias = tuple[str, int]
BindingKey: TypeAlias = tuple[str, str]
PdbKey: TypeAlias = tuple[str, str]
TableName: TypeAlias = Literal["nodes", "pods", "attempts", "bindings", "preemptions", "priority_classes", "pdbs",
                               "namespaces"]
RowKey: TypeAlias = tuple[TableName, object]
"""(table, primary key) of one row: a name, a uid, (pod uid, attempt), (pod uid, attempt id) or an event id."""


@dataclass
class ReadModel:
    """The whole read model in memory, or the slice of it a batch of events touches."""

    nodes: dict[str, NodeRow] = field(default_factory=dict)
    pods: dict[str, PodRow] = field(default_factory=dict)
    attempts: dict[AttemptKey, AttemptRow] = field(default_factory=dict)
    bindings: dict[BindingKey, BindingRow] = field(default_factory=dict)
    preemptions: dict[uuid.UUID, PreemptionRow] = field(default_factory=dict)
    priority_classes: dict[str, PriorityClassRow] = field(default_factory=dict)
    pdbs: dict[PdbKey, PdbRow] = field(default_factory=dict)
    namespaces: dict[str, NamespaceRow] = field(default_factory=dict)

    def table(self, name: TableName) -> dict[object, Row]:
        # The fields above keep each table's key and row types; reached by name, a table takes the
        # key and row that `RowKey` pairs with that name.
        tables: dict[str, dict[Any, Any]] = {
            "nodes": self.nodes,
            "pods": self.pods,
            "attempts": self.attempts,
            "bindings": self.bindings,
            "preemptions": self.preemptions,
            "priority_classes": self.priority_classes,
            "pdbs": self.pdbs,
            "namespaces": self.namespaces,
        }
        return tables[name]

    def get(self, key: RowKey) -> Row | None:
        return self.table(key[0]).get(key[1])

    def put(self, key: RowKey, row: Row | None) -> None:
        """Store `row` under `key`, or remove the key when `row` is None."""
        table = self.table(key[0])
        if row is None:
            table.pop(key[1], None)
        else:
            table[key[1]] = row

    def counts(self) -> dict[str, int]:
        names: tuple[TableName, ...] = ("nodes", "pods", "attempts", "bindings", "preemptions", "priority_classes",
                                        "pdbs", "namespaces")
        return {name: len(self.table(name)) for name in names}
