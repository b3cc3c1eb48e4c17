"""traffic: queries and answers per profile per minute, from every DNS process

Revision ID: 7c1d9e3a5b28
Revises: 4e8a1c6b2f70
Create Date: 2026-12-02 23:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "7c1d9e3a5b28"
down_revision: str | None = "4e8a1c6b2f70"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "traffic",
        sa.Column("minute", sa.BigInteger(), nullable=False),
        sa.Column("zone", sa.String(length=255), nullable=False),
        sa.Column("profile", sa.String(length=255), nullable=False),
        sa.Column("endpoint", sa.String(length=255), nullable=False),
        sa.Column("count", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint(
            "minute", "zone", "profile", "endpoint", name=op.f("pk_traffic")
        ),
    )


def downgrade() -> None:
    op.drop_table("traffic")
