"""profile and health revisions: the generation that last wrote each, so a DNS
instance refreshes only what changed

Revision ID: 23d3f9ba1666
Revises: 634c0de92039
Create Date: 2026-11-30 10:11:29.368128
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "23d3f9ba1666"
down_revision: str | None = "634c0de92039"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("endpoint_health", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("revision", sa.BigInteger(), server_default="0", nullable=False)
        )
        batch_op.create_index(
            batch_op.f("ix_endpoint_health_revision"), ["revision"], unique=False
        )

    with op.batch_alter_table("profile", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("revision", sa.BigInteger(), server_default="0", nullable=False)
        )
        batch_op.create_index(
            batch_op.f("ix_profile_revision"), ["revision"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("profile", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_profile_revision"))
        batch_op.drop_column("revision")

    with op.batch_alter_table("endpoint_health", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_endpoint_health_revision"))
        batch_op.drop_column("revision")
