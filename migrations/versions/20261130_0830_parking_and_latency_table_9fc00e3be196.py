"""parking failback state on profiles, and the latency table for performance routing

Revision ID: 9fc00e3be196
Revises: 9756807d0009
Create Date: 2026-11-30 08:30:19.327463
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "9fc00e3be196"
down_revision: str | None = "9756807d0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "latency",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("network", sa.String(length=100), nullable=False),
        sa.Column("rtt_ms", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_latency")),
        sa.UniqueConstraint("network", name=op.f("uq_latency_network")),
    )
    with op.batch_alter_table("profile", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("parked_endpoint_id", sa.Integer(), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("profile", schema=None) as batch_op:
        batch_op.drop_column("parked_endpoint_id")

    op.drop_table("latency")
