"""SQLAlchemy 2 table mappings. Rows are not domain objects; see mapping.py."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

NAME = String(255)


class Base(DeclarativeBase):
    metadata = MetaData(
        naming_convention={
            "ix": "ix_%(column_0_label)s",
            "uq": "uq_%(table_name)s_%(column_0_name)s",
            "ck": "ck_%(table_name)s_%(constraint_name)s",
            "pk": "pk_%(table_name)s",
            "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        }
    )


class MetaRow(Base):
    """One row: the configuration generation every DNS instance polls, and when
    the prober last reported (its heartbeat)."""

    __tablename__ = "meta"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    generation: Mapped[int] = mapped_column(BigInteger, default=1)
    prober_seen_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class ZoneRow(Base):
    __tablename__ = "zone"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(NAME, unique=True)
    soa_email: Mapped[str] = mapped_column(NAME)
    ns: Mapped[list[Any]] = mapped_column(JSON)
    glue: Mapped[list[Any]] = mapped_column(JSON)
    negative_ttl: Mapped[int] = mapped_column(Integer, default=60)
    # Static rrsets, validated and encoded when written (app.store.mapping):
    # [{"name", "type", "ttl", "records": [{"text", "wire": base64}]}]
    rrsets: Mapped[list[Any]] = mapped_column(JSON, default=list, server_default="[]")

    profiles: Mapped[list[ProfileRow]] = relationship(
        back_populates="zone",
        cascade="all, delete-orphan",
        passive_deletes=True,
        order_by="ProfileRow.id",
    )


class ProfileRow(Base):
    __tablename__ = "profile"
    __table_args__ = (
        UniqueConstraint("zone_id", "name"),
        CheckConstraint("ttl >= 0", name="ttl_not_negative"),
        CheckConstraint("ttl_degraded >= 0", name="ttl_degraded_not_negative"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    zone_id: Mapped[int] = mapped_column(ForeignKey("zone.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(NAME)
    method: Mapped[str] = mapped_column(String(16))
    ttl: Mapped[int] = mapped_column(Integer, default=60)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    monitor: Mapped[dict[str, Any]] = mapped_column(JSON)
    srv: Mapped[list[Any]] = mapped_column(JSON)
    max_return: Mapped[int] = mapped_column(Integer, default=2)
    failback: Mapped[str] = mapped_column(String(16))
    all_down: Mapped[str] = mapped_column(String(16))
    fallback: Mapped[str | None] = mapped_column(String(45))
    geo_failover: Mapped[bool] = mapped_column(Boolean, default=False)
    ttl_degraded: Mapped[int | None] = mapped_column(Integer)
    min_available: Mapped[str | None] = mapped_column(String(8))  # "2" or "50%"
    on_stale: Mapped[str] = mapped_column(
        String(16), default="keep", server_default="keep"
    )
    # priority/parking: the endpoint in use, shared by every DNS instance. No
    # foreign key: a stale id is simply not among the available endpoints.
    parked_endpoint_id: Mapped[int | None] = mapped_column(Integer)
    # The generation that last wrote this profile or its endpoints: a DNS
    # instance refreshing from generation G reads only the profiles above G.
    revision: Mapped[int] = mapped_column(
        BigInteger, default=0, server_default="0", index=True
    )

    zone: Mapped[ZoneRow] = relationship(back_populates="profiles")
    endpoints: Mapped[list[EndpointRow]] = relationship(
        back_populates="profile",
        cascade="all, delete-orphan",
        passive_deletes=True,
        order_by="EndpointRow.id",
        foreign_keys="EndpointRow.profile_id",
    )


class EndpointRow(Base):
    __tablename__ = "endpoint"
    __table_args__ = (
        # Priorities are unique per profile too, but swapping two of them would trip
        # a per-statement unique key; domain.validation enforces that rule instead.
        UniqueConstraint("profile_id", "name"),
        CheckConstraint("weight BETWEEN 0 AND 1000", name="weight_range"),
        CheckConstraint("priority BETWEEN 1 AND 1000", name="priority_range"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    profile_id: Mapped[int] = mapped_column(
        ForeignKey("profile.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(63))
    kind: Mapped[str] = mapped_column(String(16))
    address: Mapped[str | None] = mapped_column(String(45))
    target: Mapped[str | None] = mapped_column(NAME)
    child_id: Mapped[int | None] = mapped_column(
        ForeignKey("profile.id", ondelete="RESTRICT"), index=True
    )
    min_child_endpoints: Mapped[int] = mapped_column(Integer, default=1)
    min_child_endpoints_ipv4: Mapped[int] = mapped_column(
        Integer, default=0, server_default="0"
    )
    min_child_endpoints_ipv6: Mapped[int] = mapped_column(
        Integer, default=0, server_default="0"
    )
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    priority: Mapped[int] = mapped_column(Integer)
    weight: Mapped[int] = mapped_column(Integer, default=1)
    geo: Mapped[list[Any]] = mapped_column(JSON)
    subnets: Mapped[list[Any]] = mapped_column(JSON)
    location: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    port: Mapped[int | None] = mapped_column(Integer)
    always_serve: Mapped[bool] = mapped_column(Boolean, default=False)
    monitor: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    override: Mapped[dict[str, Any] | None] = mapped_column(JSON)

    profile: Mapped[ProfileRow] = relationship(
        back_populates="endpoints", foreign_keys=[profile_id]
    )


class VerdictColumns:
    """A view of one endpoint's health: the decided one DNS answers from, and
    each vantage's own."""

    state: Mapped[str] = mapped_column(String(16))
    since: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    reason: Mapped[str] = mapped_column(Text, default="")
    failures: Mapped[int] = mapped_column(Integer, default=0)
    successes: Mapped[int] = mapped_column(Integer, default=0)
    latency_ms: Mapped[float | None] = mapped_column(Float)
    checked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class EndpointHealthRow(VerdictColumns, Base):
    """The decided health per endpoint (DESIGN §2 endpoint health): what DNS
    answers from, made of the voting vantages' views by the monitor's quorum."""

    __tablename__ = "endpoint_health"

    endpoint_id: Mapped[int] = mapped_column(
        ForeignKey("endpoint.id", ondelete="CASCADE"), primary_key=True
    )
    # The generation of the last state change (a transition), as on profiles.
    revision: Mapped[int] = mapped_column(
        BigInteger, default=0, server_default="0", index=True
    )


class VantageRow(Base):
    """One prober instance (TMDNS_PROBER__VANTAGE) and its heartbeat."""

    __tablename__ = "vantage"

    name: Mapped[str] = mapped_column(String(100), primary_key=True)
    seen_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # When its current unbroken run of heartbeats began: a prober back from
    # an outage waits before it calls the others stale.
    resumed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    voting: Mapped[bool] = mapped_column(Boolean, default=True)
    source: Mapped[str | None] = mapped_column(String(64))


class VantageHealthRow(VerdictColumns, Base):
    """One vantage's own view of one endpoint, with its own hysteresis."""

    __tablename__ = "vantage_health"

    endpoint_id: Mapped[int] = mapped_column(
        ForeignKey("endpoint.id", ondelete="CASCADE"), primary_key=True
    )
    vantage: Mapped[str] = mapped_column(
        ForeignKey("vantage.name", ondelete="CASCADE"), primary_key=True
    )


class HealthTransitionRow(Base):
    __tablename__ = "health_transition"

    id: Mapped[int] = mapped_column(primary_key=True)
    endpoint_id: Mapped[int] = mapped_column(
        ForeignKey("endpoint.id", ondelete="CASCADE"), index=True
    )
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    old_state: Mapped[str] = mapped_column(String(16))
    new_state: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str] = mapped_column(Text, default="")


class LatencyRow(Base):
    """The operator's latency table for performance routing: one client network
    and the round trip it measures to each location."""

    __tablename__ = "latency"

    id: Mapped[int] = mapped_column(primary_key=True)
    network: Mapped[str] = mapped_column(String(100), unique=True)
    rtt_ms: Mapped[dict[str, Any]] = mapped_column(JSON)


class TokenRow(Base):
    """An API token: only the SHA-256 of the secret is kept."""

    __tablename__ = "api_token"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    scope: Mapped[str] = mapped_column(String(16))
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class AuditRow(Base):
    """Every configuration change: who, what, before and after (DESIGN §6)."""

    __tablename__ = "audit"

    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    actor: Mapped[str] = mapped_column(String(255))
    action: Mapped[str] = mapped_column(String(64))
    resource: Mapped[str] = mapped_column(NAME, index=True)
    before: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    after: Mapped[dict[str, Any] | None] = mapped_column(JSON)


class EventRow(Base):
    """What happened, for the event stream and webhooks: configuration
    changes, decided and per-vantage health transitions, vantages going
    quiet or coming back. Written in the transaction of the change itself,
    so an event is never told for a change that rolled back; the id orders
    them and resumes a stream (Last-Event-ID)."""

    __tablename__ = "event"

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"), primary_key=True
    )
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    kind: Mapped[str] = mapped_column(String(32))
    subject: Mapped[str] = mapped_column(NAME)
    data: Mapped[dict[str, Any]] = mapped_column(JSON)


class WebhookRow(Base):
    """A receiver of events. The secret is kept as given: signing needs it."""

    __tablename__ = "webhook"

    id: Mapped[int] = mapped_column(primary_key=True)
    url: Mapped[str] = mapped_column(Text)
    events: Mapped[list[Any]] = mapped_column(JSON)
    secret: Mapped[str] = mapped_column(String(256))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # Delivery bookkeeping, not configuration (no audit, no generation): the
    # last event handled, and which API process sends, until when.
    cursor: Mapped[int] = mapped_column(BigInteger, default=0)
    lease_owner: Mapped[str | None] = mapped_column(String(64))
    lease_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class WebhookDeliveryRow(Base):
    """One try at delivering one event, kept for the delivery log."""

    __tablename__ = "webhook_delivery"

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"), primary_key=True
    )
    webhook_id: Mapped[int] = mapped_column(
        ForeignKey("webhook.id", ondelete="CASCADE"), index=True
    )
    event_id: Mapped[int] = mapped_column(BigInteger)
    kind: Mapped[str] = mapped_column(String(32))
    attempt: Mapped[int] = mapped_column(Integer)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    status: Mapped[int] = mapped_column(Integer)  # the HTTP status; 0 for none
    outcome: Mapped[str] = mapped_column(String(16))  # delivered, failed, dropped
    error: Mapped[str] = mapped_column(Text, default="")


class TrafficRow(Base):
    """Queries and answers per profile per minute, summed over every DNS
    process (each adds what it answered since its last flush), for the
    dashboard's charts: Traffic View's question without a log pipeline.
    `endpoint` "" holds the profile's query count; the other rows how often
    each endpoint was handed out."""

    __tablename__ = "traffic"

    minute: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    zone: Mapped[str] = mapped_column(NAME, primary_key=True)
    profile: Mapped[str] = mapped_column(NAME, primary_key=True)
    endpoint: Mapped[str] = mapped_column(NAME, primary_key=True)
    count: Mapped[int] = mapped_column(BigInteger)
