"""The node a preempted pod was evicted from, kept apart from the node it was bound to: a victim
whose bind was still in flight was never bound, yet upstream's Preempted event names the node.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("pods", sa.Column("preempted_on", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("pods", "preempted_on")
