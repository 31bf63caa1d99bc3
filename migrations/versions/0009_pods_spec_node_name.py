"""Pods keep their spec.nodeName in a column of its own.

The derived `node_name` of a pod not yet bound is its spec.nodeName, which the fold read from the
stored spec: so the projector loaded, decoded, encoded and wrote back every pod's whole spec for
each event about it. With the node name in a column, the projector loads pods without their spec.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("pods", sa.Column("spec_node_name", sa.Text(), nullable=False, server_default=""))
    op.execute("UPDATE pods SET spec_node_name = coalesce(pod -> 'spec' ->> 'nodeName', '') WHERE pod IS NOT NULL")
    op.alter_column("pods", "spec_node_name", server_default=None)


def downgrade() -> None:
    op.drop_column("pods", "spec_node_name")
