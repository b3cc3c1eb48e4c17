"""api tokens: named, scoped, stored as SHA-256 digests, revocable

Revision ID: 634c0de92039
Revises: 3cea0b1954ab
Create Date: 2026-11-30 08:55:33.299532
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "634c0de92039"
down_revision: str | None = "3cea0b1954ab"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "api_token",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("scope", sa.String(length=16), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_token")),
        sa.UniqueConstraint("digest", name=op.f("uq_api_token_digest")),
        sa.UniqueConstraint("name", name=op.f("uq_api_token_name")),
    )


def downgrade() -> None:
    op.drop_table("api_token")
