"""health thresholds: a profile's TTL while an endpoint is unavailable (none:
half its TTL), how many must be available before it fails open ("2" or
"50%"), and a nested endpoint's minimum of children answering A and AAAA

Revision ID: 8c3f1a6e2d57
Revises: 5b1e2c7d9a40
Create Date: 2026-12-02 14:45:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "8c3f1a6e2d57"
down_revision: str | None = "5b1e2c7d9a40"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("profile", schema=None) as batch_op:
        batch_op.add_column(sa.Column("ttl_degraded", sa.Integer(), nullable=True))
        batch_op.add_column(
            sa.Column("min_available", sa.String(length=8), nullable=True)
        )
        batch_op.create_check_constraint(
            op.f("ck_profile_ttl_degraded_not_negative"), "ttl_degraded >= 0"
        )

    with op.batch_alter_table("endpoint", schema=None) as batch_op:
        for family in ("ipv4", "ipv6"):
            batch_op.add_column(
                sa.Column(
                    f"min_child_endpoints_{family}",
                    sa.Integer(),
                    server_default="0",
                    nullable=False,
                )
            )


def downgrade() -> None:
    with op.batch_alter_table("endpoint", schema=None) as batch_op:
        batch_op.drop_column("min_child_endpoints_ipv6")
        batch_op.drop_column("min_child_endpoints_ipv4")
    with op.batch_alter_table("profile", schema=None) as batch_op:
        batch_op.drop_constraint(
            op.f("ck_profile_ttl_degraded_not_negative"), type_="check"
        )
        batch_op.drop_column("min_available")
        batch_op.drop_column("ttl_degraded")
