"""vantages: each prober's heartbeat and its own view of every endpoint, from
which the decided health is made by the monitor's quorum

Revision ID: 6a2d8f4b1c93
Revises: 3d9a7e1f5c22
Create Date: 2026-12-02 19:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "6a2d8f4b1c93"
down_revision: str | None = "3d9a7e1f5c22"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "vantage",
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("resumed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("voting", sa.Boolean(), nullable=False),
        sa.Column("source", sa.String(length=64), nullable=True),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_vantage")),
    )
    op.create_table(
        "vantage_health",
        sa.Column("endpoint_id", sa.Integer(), nullable=False),
        sa.Column("vantage", sa.String(length=100), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("successes", sa.Integer(), nullable=False),
        sa.Column("latency_ms", sa.Float(), nullable=True),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["endpoint_id"],
            ["endpoint.id"],
            name=op.f("fk_vantage_health_endpoint_id_endpoint"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["vantage"],
            ["vantage.name"],
            name=op.f("fk_vantage_health_vantage_vantage"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "endpoint_id", "vantage", name=op.f("pk_vantage_health")
        ),
    )


def downgrade() -> None:
    op.drop_table("vantage_health")
    op.drop_table("vantage")
