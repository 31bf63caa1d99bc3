"""The Postgres schema as SQLAlchemy 2 models: event store, consumer offsets and the read model.

The read-model tables mirror `shared.projection.rows` column for column, so a row converts to and
from a struct by field name (see `projection_store`). Changing a table means a new Alembic revision
in `migrations/versions/`.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from sqlalchemy import BigInteger, Boolean, DateTime, Identity, Index, Integer, Table, Text, func
from sqlalchemy.dialects.postgresql import JSON, JSONB, UUID
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

if TYPE_CHECKING:
    from shared.projection import TableName

Timestamp = DateTime(timezone=True)


class Base(DeclarativeBase):
    if TYPE_CHECKING:
        # DeclarativeBase says FromClause (a class may map a join or a select); each model here maps
        # a Table, whose columns and constraints the adapters read.
        __table__: ClassVar[Table]


class StoredEvent(Base):
    """Every event Berth published, once (append-only; unique event id). Replay reads this."""

    __tablename__ = "events"

    seq: Mapped[int] = mapped_column(BigInteger, Identity(always=True), unique=True)
    event_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    topic: Mapped[str] = mapped_column(Text)
    partition: Mapped[int] = mapped_column(Integer)
    offset: Mapped[int] = mapped_column(BigInteger)
    type: Mapped[str] = mapped_column(Text)
    key: Mapped[str] = mapped_column(Text)
    timestamp: Mapped[datetime] = mapped_column(Timestamp)
    producer: Mapped[str] = mapped_column(Text)
    causation_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True))
    correlation_id: Mapped[str | None] = mapped_column(Text)
    schema_version: Mapped[int] = mapped_column(Integer)
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    """As written (json, not jsonb): stored once and read back whole; only a debugging query looks inside."""
    stored_at: Mapped[datetime] = mapped_column(Timestamp, server_default=func.now())

    __table_args__ = (
        Index("ix_events_type", "type"),
        Index("ix_events_key", "key"),
    )


class AcceptedIntent(Base):
    """Every event the gateway acknowledged to a client, written once the broker acknowledged it and
    before the reply. The embedded broker keeps its log in memory: an intent it lost before the
    projector stored it is published again from here when the log is rebuilt."""

    __tablename__ = "accepted_intents"

    seq: Mapped[int] = mapped_column(BigInteger, Identity(always=True), unique=True)
    event_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    topic: Mapped[str] = mapped_column(Text)
    type: Mapped[str] = mapped_column(Text)
    key: Mapped[str] = mapped_column(Text)
    timestamp: Mapped[datetime] = mapped_column(Timestamp)
    producer: Mapped[str] = mapped_column(Text)
    schema_version: Mapped[int] = mapped_column(Integer)
    payload: Mapped[dict[str, Any]] = mapped_column(JSONB)
    accepted_at: Mapped[datetime] = mapped_column(Timestamp, server_default=func.now())


class ConsumerOffset(Base):
    """The next offset a consumer group applies, written in the same transaction as its effects."""

    __tablename__ = "consumer_offsets"

    group_id: Mapped[str] = mapped_column(Text, primary_key=True)
    topic: Mapped[str] = mapped_column(Text, primary_key=True)
    partition: Mapped[int] = mapped_column(Integer, primary_key=True)
    next_offset: Mapped[int] = mapped_column(BigInteger)
    updated_at: Mapped[datetime] = mapped_column(Timestamp, server_default=func.now(), onupdate=func.now())


class NodeModel(Base):
    __tablename__ = "nodes"

    name: Mapped[str] = mapped_column(Text, primary_key=True)
    node: Mapped[dict[str, Any]] = mapped_column(JSONB)
    updated_at: Mapped[datetime] = mapped_column(Timestamp)


class PodModel(Base):
    __tablename__ = "pods"

    uid: Mapped[str] = mapped_column(Text, primary_key=True)
    namespace: Mapped[str] = mapped_column(Text)
    name: Mapped[str] = mapped_column(Text)
    pod: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    spec_node_name: Mapped[str] = mapped_column(Text)
    submitted_at: Mapped[datetime | None] = mapped_column(Timestamp)
    deleted: Mapped[bool] = mapped_column(Boolean)
    deleted_at: Mapped[datetime | None] = mapped_column(Timestamp)
    preempted_by: Mapped[str | None] = mapped_column(Text)
    preempted_on: Mapped[str | None] = mapped_column(Text)
    nominated_node_name: Mapped[str] = mapped_column(Text)
    bound_node: Mapped[str] = mapped_column(Text)
    bound_at: Mapped[datetime | None] = mapped_column(Timestamp)
    bound_event_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True))
    failed_reason: Mapped[str | None] = mapped_column(Text)
    failed_message: Mapped[str | None] = mapped_column(Text)
    last_attempt: Mapped[int] = mapped_column(Integer)
    message: Mapped[str | None] = mapped_column(Text)
    phase: Mapped[str] = mapped_column(Text)
    node_name: Mapped[str] = mapped_column(Text)

    __table_args__ = (
        Index("ix_pods_namespace_name", "namespace", "name"),
        Index("ix_pods_phase", "phase"),
        Index("ix_pods_node_name", "node_name"),
    )


class AttemptModel(Base):
    __tablename__ = "scheduling_attempts"

    pod_uid: Mapped[str] = mapped_column(Text, primary_key=True)
    attempt: Mapped[int] = mapped_column(Integer, primary_key=True)
    profile: Mapped[str] = mapped_column(Text)
    node_name: Mapped[str | None] = mapped_column(Text)
    message: Mapped[str | None] = mapped_column(Text)
    seed: Mapped[int] = mapped_column(BigInteger)
    config_hash: Mapped[str] = mapped_column(Text)
    event_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True))
    attempted_at: Mapped[datetime] = mapped_column(Timestamp)


class BindingModel(Base):
    __tablename__ = "bindings"

    pod_uid: Mapped[str] = mapped_column(Text, primary_key=True)
    attempt_id: Mapped[str] = mapped_column(Text, primary_key=True)
    node_name: Mapped[str] = mapped_column(Text)
    state: Mapped[str] = mapped_column(Text)
    seed: Mapped[int | None] = mapped_column(BigInteger)
    reason: Mapped[str | None] = mapped_column(Text)
    requested_at: Mapped[datetime | None] = mapped_column(Timestamp)
    decided_at: Mapped[datetime | None] = mapped_column(Timestamp)

    __table_args__ = (Index("ix_bindings_node_name", "node_name"),)


class PreemptionModel(Base):
    __tablename__ = "preemptions"

    event_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    preemptor_uid: Mapped[str] = mapped_column(Text)
    nominated_node: Mapped[str] = mapped_column(Text)
    victims: Mapped[list[dict[str, Any]]] = mapped_column(JSONB)
    message: Mapped[str] = mapped_column(Text)
    decided_at: Mapped[datetime] = mapped_column(Timestamp)

    __table_args__ = (Index("ix_preemptions_preemptor_uid", "preemptor_uid"),)


class PriorityClassModel(Base):
    __tablename__ = "priority_classes"

    name: Mapped[str] = mapped_column(Text, primary_key=True)
    priority_class: Mapped[dict[str, Any]] = mapped_column(JSONB)
    updated_at: Mapped[datetime] = mapped_column(Timestamp)


class PdbModel(Base):
    __tablename__ = "pod_disruption_budgets"

    namespace: Mapped[str] = mapped_column(Text, primary_key=True)
    name: Mapped[str] = mapped_column(Text, primary_key=True)
    pdb: Mapped[dict[str, Any]] = mapped_column(JSONB)
    updated_at: Mapped[datetime] = mapped_column(Timestamp)


class NamespaceModel(Base):
    __tablename__ = "namespaces"

    name: Mapped[str] = mapped_column(Text, primary_key=True)
    namespace: Mapped[dict[str, Any]] = mapped_column(JSONB)
    updated_at: Mapped[datetime] = mapped_column(Timestamp)


READ_MODEL_TABLES: dict[TableName, type[Base]] = {
    "nodes": NodeModel,
    "pods": PodModel,
    "attempts": AttemptModel,
    "bindings": BindingModel,
    "preemptions": PreemptionModel,
    "priority_classes": PriorityClassModel,
    "pdbs": PdbModel,
    "namespaces": NamespaceModel,
}
"""Read-model table by the name `shared.projection.ReadModel` uses for it."""
