"""The event store keeps each payload as the JSON text it was given (json, not jsonb).

Every event is written once and read back whole (replay, the history, a watch): jsonb's binary form
pays for parsing and rebuilding on every insert and serves only the rare lookup of one pod's events.
Measured with `berth bench --mode cluster` (SchedulingBasic, 5,000 nodes, 10,000 pods, 2 cores, five
alternated pairs): the database's CPU per pod fell by 13%.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE events ALTER COLUMN payload TYPE json USING payload::json")


def downgrade() -> None:
    op.execute("ALTER TABLE events ALTER COLUMN payload TYPE jsonb USING payload::jsonb")
