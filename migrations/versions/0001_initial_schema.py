"""Initial schema: event store, consumer offsets and the read model.

Revision ID: 0001
Revises:
Create Date: 2026-11-23
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)
UUID = postgresql.UUID(as_uuid=True)
JSONB = postgresql.JSONB(astext_type=sa.Text())


def upgrade() -> None:
    op.create_table(
        "events",
        sa.Column("seq", sa.BigInteger(), sa.Identity(always=True), nullable=False),
        sa.Column("event_id", UUID, nullable=False),
        sa.Column("topic", sa.Text(), nullable=False),
        sa.Column("partition", sa.Integer(), nullable=False),
        sa.Column("offset", sa.BigInteger(), nullable=False),
        sa.Column("type", sa.Text(), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("timestamp", TS, nullable=False),
        sa.Column("producer", sa.Text(), nullable=False),
        sa.Column("causation_id", UUID, nullable=True),
        sa.Column("correlation_id", sa.Text(), nullable=True),
        sa.Column("schema_version", sa.Integer(), nullable=False),
        sa.Column("payload", JSONB, nullable=False),
        sa.Column("stored_at", TS, server_default=sa.text("now()"), nullable=False),
        sa.PrimaryKeyConstraint("event_id"),
        sa.UniqueConstraint("seq"),
    )
    op.create_index("ix_events_type", "events", ["type"])
    op.create_index("ix_events_key", "events", ["key"])
    op.create_index("ix_events_correlation_id", "events", ["correlation_id"])
    op.create_index("ix_events_position", "events", ["topic", "partition", "offset"])

    op.create_table(
        "consumer_offsets",
        sa.Column("group_id", sa.Text(), nullable=False),
        sa.Column("topic", sa.Text(), nullable=False),
        sa.Column("partition", sa.Integer(), nullable=False),
        sa.Column("next_offset", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", TS, server_default=sa.text("now()"), nullable=False),
        sa.PrimaryKeyConstraint("group_id", "topic", "partition"),
    )

    op.create_table(
        "nodes",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("node", JSONB, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )

    op.create_table(
        "pods",
        sa.Column("uid", sa.Text(), nullable=False),
        sa.Column("namespace", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("pod", JSONB, nullable=True),
        sa.Column("submitted_at", TS, nullable=True),
        sa.Column("deleted", sa.Boolean(), nullable=False),
        sa.Column("deleted_at", TS, nullable=True),
        sa.Column("preempted_by", sa.Text(), nullable=True),
        sa.Column("nominated_node_name", sa.Text(), nullable=False),
        sa.Column("bound_node", sa.Text(), nullable=False),
        sa.Column("bound_at", TS, nullable=True),
        sa.Column("bound_event_id", UUID, nullable=True),
        sa.Column("last_attempt", sa.Integer(), nullable=False),
        sa.Column("message", sa.Text(), nullable=True),
        sa.Column("phase", sa.Text(), nullable=False),
        sa.Column("node_name", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("uid"),
    )
    op.create_index("ix_pods_namespace_name", "pods", ["namespace", "name"])
    op.create_index("ix_pods_phase", "pods", ["phase"])
    op.create_index("ix_pods_node_name", "pods", ["node_name"])

    op.create_table(
        "scheduling_attempts",
        sa.Column("pod_uid", sa.Text(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("profile", sa.Text(), nullable=False),
        sa.Column("node_name", sa.Text(), nullable=True),
        sa.Column("message", sa.Text(), nullable=True),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("config_hash", sa.Text(), nullable=False),
        sa.Column("event_id", UUID, nullable=False),
        sa.Column("attempted_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("pod_uid", "attempt"),
    )

    op.create_table(
        "bindings",
        sa.Column("pod_uid", sa.Text(), nullable=False),
        sa.Column("attempt_id", sa.Text(), nullable=False),
        sa.Column("node_name", sa.Text(), nullable=False),
        sa.Column("state", sa.Text(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("requested_at", TS, nullable=True),
        sa.Column("decided_at", TS, nullable=True),
        sa.PrimaryKeyConstraint("pod_uid", "attempt_id"),
    )
    op.create_index("ix_bindings_node_name", "bindings", ["node_name"])

    op.create_table(
        "preemptions",
        sa.Column("event_id", UUID, nullable=False),
        sa.Column("preemptor_uid", sa.Text(), nullable=False),
        sa.Column("nominated_node", sa.Text(), nullable=False),
        sa.Column("victims", JSONB, nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("decided_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("event_id"),
    )
    op.create_index("ix_preemptions_preemptor_uid", "preemptions", ["preemptor_uid"])


def downgrade() -> None:
    for table in ("preemptions", "bindings", "scheduling_attempts", "pods", "nodes", "consumer_offsets", "events"):
        op.drop_table(table)
