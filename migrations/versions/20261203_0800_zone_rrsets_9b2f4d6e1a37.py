"""zone rrsets: static records (TXT, MX, CAA, CNAME, NS delegations…) per zone

Revision ID: 9b2f4d6e1a37
Revises: 7c1d9e3a5b28
Create Date: 2026-12-03 08:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "9b2f4d6e1a37"
down_revision: str | None = "7c1d9e3a5b28"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("zone") as batch:
        batch.add_column(
            sa.Column("rrsets", sa.JSON(), nullable=False, server_default="[]")
        )


def downgrade() -> None:
    with op.batch_alter_table("zone") as batch:
        batch.drop_column("rrsets")
