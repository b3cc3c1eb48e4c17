"""events: what happened (configuration changes, health transitions, vantages
going quiet), written with the change, for the event stream and webhooks

Revision ID: 9b4c2e7a1d05
Revises: 6a2d8f4b1c93
Create Date: 2026-12-02 19:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "9b4c2e7a1d05"
down_revision: str | None = "6a2d8f4b1c93"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "event",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            nullable=False,
        ),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("subject", sa.String(length=255), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_event")),
    )


def downgrade() -> None:
    op.drop_table("event")
