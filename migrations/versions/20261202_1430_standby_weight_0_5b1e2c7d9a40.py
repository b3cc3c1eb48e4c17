"""standby weight 0: an endpoint's weight may be 0 (served only when no
endpoint with a weight is available, as Route 53)

Revision ID: 5b1e2c7d9a40
Revises: 23d3f9ba1666
Create Date: 2026-12-02 14:30:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "5b1e2c7d9a40"
down_revision: str | None = "23d3f9ba1666"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("endpoint", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_endpoint_weight_range"), type_="check")
        batch_op.create_check_constraint(
            op.f("ck_endpoint_weight_range"), "weight BETWEEN 0 AND 1000"
        )


def downgrade() -> None:
    # A standby endpoint becomes the lightest weighted one.
    op.execute("UPDATE endpoint SET weight = 1 WHERE weight = 0")
    with op.batch_alter_table("endpoint", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_endpoint_weight_range"), type_="check")
        batch_op.create_check_constraint(
            op.f("ck_endpoint_weight_range"), "weight BETWEEN 1 AND 1000"
        )
