"""prober heartbeat: when the prober last reported, for stale states

Revision ID: 3cea0b1954ab
Revises: 9fc00e3be196
Create Date: 2026-11-30 08:52:27.865898
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "3cea0b1954ab"
down_revision: str | None = "9fc00e3be196"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("meta", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("prober_seen_at", sa.DateTime(timezone=True), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("meta", schema=None) as batch_op:
        batch_op.drop_column("prober_seen_at")
