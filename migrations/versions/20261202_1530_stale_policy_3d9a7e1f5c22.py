"""stale policy: what a profile answers while the prober is silent (keep the
last states, or serve every enabled endpoint)

Revision ID: 3d9a7e1f5c22
Revises: 8c3f1a6e2d57
Create Date: 2026-12-02 15:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "3d9a7e1f5c22"
down_revision: str | None = "8c3f1a6e2d57"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("profile", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "on_stale", sa.String(length=16), server_default="keep", nullable=False
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("profile", schema=None) as batch_op:
        batch_op.drop_column("on_stale")
