"""The event store drops the two indexes no query reads (correlation id, topic position).

Every stored event paid for six index entries; reads go by `seq` (the history, a watch, a restore),
by `key` (one pod's events) and by `type` (which objects exist). Replaying a recorded SchedulingBasic
log (10,000 pods) into the store, four alternated pairs: the database's CPU per pod fell from 1.26
to 1.11 times the projector's (the machine's speed drifts more than the change between runs).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_index("ix_events_correlation_id", table_name="events")
    op.drop_index("ix_events_position", table_name="events")


def downgrade() -> None:
    op.create_index("ix_events_position", "events", ["topic", "partition", "offset"])
    op.create_index("ix_events_correlation_id", "events", ["correlation_id"])
