"""initial schema: zones, profiles, endpoints, health, transitions, audit

Revision ID: 9756807d0009
Revises:
Create Date: 2026-11-30 07:50:41.354973
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "9756807d0009"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "audit",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor", sa.String(length=255), nullable=False),
        sa.Column("action", sa.String(length=64), nullable=False),
        sa.Column("resource", sa.String(length=255), nullable=False),
        sa.Column("before", sa.JSON(), nullable=True),
        sa.Column("after", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit")),
    )
    with op.batch_alter_table("audit", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_audit_at"), ["at"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_audit_resource"), ["resource"], unique=False
        )

    meta = op.create_table(
        "meta",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("generation", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_meta")),
    )
    # The one generation row every DNS instance polls; SOA serials start at 1.
    op.bulk_insert(meta, [{"id": 1, "generation": 1}])
    op.create_table(
        "zone",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("soa_email", sa.String(length=255), nullable=False),
        sa.Column("ns", sa.JSON(), nullable=False),
        sa.Column("glue", sa.JSON(), nullable=False),
        sa.Column("negative_ttl", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_zone")),
        sa.UniqueConstraint("name", name=op.f("uq_zone_name")),
    )
    op.create_table(
        "profile",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("zone_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("method", sa.String(length=16), nullable=False),
        sa.Column("ttl", sa.Integer(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("monitor", sa.JSON(), nullable=False),
        sa.Column("srv", sa.JSON(), nullable=False),
        sa.Column("max_return", sa.Integer(), nullable=False),
        sa.Column("failback", sa.String(length=16), nullable=False),
        sa.Column("all_down", sa.String(length=16), nullable=False),
        sa.Column("fallback", sa.String(length=45), nullable=True),
        sa.Column("geo_failover", sa.Boolean(), nullable=False),
        sa.CheckConstraint("ttl >= 0", name=op.f("ck_profile_ttl_not_negative")),
        sa.ForeignKeyConstraint(
            ["zone_id"],
            ["zone.id"],
            name=op.f("fk_profile_zone_id_zone"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_profile")),
        sa.UniqueConstraint("zone_id", "name", name=op.f("uq_profile_zone_id")),
    )
    op.create_table(
        "endpoint",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("profile_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=63), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("address", sa.String(length=45), nullable=True),
        sa.Column("target", sa.String(length=255), nullable=True),
        sa.Column("child_id", sa.Integer(), nullable=True),
        sa.Column("min_child_endpoints", sa.Integer(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("weight", sa.Integer(), nullable=False),
        sa.Column("geo", sa.JSON(), nullable=False),
        sa.Column("subnets", sa.JSON(), nullable=False),
        sa.Column("location", sa.JSON(), nullable=True),
        sa.Column("port", sa.Integer(), nullable=True),
        sa.Column("always_serve", sa.Boolean(), nullable=False),
        sa.Column("monitor", sa.JSON(), nullable=True),
        sa.Column("override", sa.JSON(), nullable=True),
        sa.CheckConstraint(
            "priority BETWEEN 1 AND 1000", name=op.f("ck_endpoint_priority_range")
        ),
        sa.CheckConstraint(
            "weight BETWEEN 1 AND 1000", name=op.f("ck_endpoint_weight_range")
        ),
        sa.ForeignKeyConstraint(
            ["child_id"],
            ["profile.id"],
            name=op.f("fk_endpoint_child_id_profile"),
            ondelete="RESTRICT",
        ),
        sa.ForeignKeyConstraint(
            ["profile_id"],
            ["profile.id"],
            name=op.f("fk_endpoint_profile_id_profile"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_endpoint")),
        sa.UniqueConstraint("profile_id", "name", name=op.f("uq_endpoint_profile_id")),
    )
    with op.batch_alter_table("endpoint", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_endpoint_child_id"), ["child_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_endpoint_profile_id"), ["profile_id"], unique=False
        )

    op.create_table(
        "endpoint_health",
        sa.Column("endpoint_id", sa.Integer(), nullable=False),
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
            name=op.f("fk_endpoint_health_endpoint_id_endpoint"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("endpoint_id", name=op.f("pk_endpoint_health")),
    )
    op.create_table(
        "health_transition",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("endpoint_id", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("old_state", sa.String(length=16), nullable=False),
        sa.Column("new_state", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["endpoint_id"],
            ["endpoint.id"],
            name=op.f("fk_health_transition_endpoint_id_endpoint"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_health_transition")),
    )
    with op.batch_alter_table("health_transition", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_health_transition_at"), ["at"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_health_transition_endpoint_id"),
            ["endpoint_id"],
            unique=False,
        )


def downgrade() -> None:
    with op.batch_alter_table("health_transition", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_health_transition_endpoint_id"))
        batch_op.drop_index(batch_op.f("ix_health_transition_at"))

    op.drop_table("health_transition")
    op.drop_table("endpoint_health")
    with op.batch_alter_table("endpoint", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_endpoint_profile_id"))
        batch_op.drop_index(batch_op.f("ix_endpoint_child_id"))

    op.drop_table("endpoint")
    op.drop_table("profile")
    op.drop_table("zone")
    op.drop_table("meta")
    with op.batch_alter_table("audit", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_audit_resource"))
        batch_op.drop_index(batch_op.f("ix_audit_at"))

    op.drop_table("audit")
