"""Pods created with spec.nodeName that their node refused (the kubelet's admission): the phase
Failed with the kubelet's reason and message.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("pods", sa.Column("failed_reason", sa.Text(), nullable=True))
    op.add_column("pods", sa.Column("failed_message", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("pods", "failed_message")
    op.drop_column("pods", "failed_reason")
