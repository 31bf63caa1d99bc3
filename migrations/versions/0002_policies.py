"""PriorityClasses and PodDisruptionBudgets in the read model (the gateway resolves priorities from them).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)
JSONB = postgresql.JSONB(astext_type=sa.Text())


def upgrade() -> None:
    op.create_table(
        "priority_classes",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("priority_class", JSONB, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "pod_disruption_budgets",
        sa.Column("namespace", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("pdb", JSONB, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("namespace", "name"),
    )


def downgrade() -> None:
    op.drop_table("pod_disruption_budgets")
    op.drop_table("priority_classes")
