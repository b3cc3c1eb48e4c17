"""The Store interface: domain values in and out, one transaction per use case."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from app.domain.changes import Changes
from app.domain.health import Transition
from app.domain.model import (
    ChangeAction,
    ChangeKind,
    Config,
    Health,
    HealthState,
    LatencyRows,
    Profile,
    Quorum,
    StaticRRset,
    Zone,
)
from app.domain.tokens import Token
from app.domain.vantages import Vantage
from app.domain.webhooks import Webhook

# The vantage of verdicts written without one (the command line, tests): a
# prober always names its own (TMDNS_PROBER__VANTAGE, default the host name).
LOCAL_VANTAGE = "local"

ProfileChange = Callable[[Profile], Profile]
ZoneChange = Callable[[Zone], Zone]
# Sees the rrset a write replaces (None: a new one) inside its transaction.
RRsetGuard = Callable[["StaticRRset | None"], None] | None
# (minute start in epoch seconds, zone, profile, endpoint or "" for the
# profile's queries) → count: what a DNS process answered (app.traffic).
TrafficCounts = Mapping[tuple[int, str, str, str], int]


@dataclass(frozen=True, slots=True)
class HealthUpdate:
    """One vantage's view to store; `previous` is its state before (None:
    unknown); `quorum` is the endpoint monitor's, which the decided state is
    made by."""

    endpoint_id: int
    health: Health
    previous: HealthState | None
    quorum: Quorum = Quorum.MAJORITY


@dataclass(frozen=True, slots=True)
class AuditEntry:
    id: int
    at: float
    actor: str
    action: str
    resource: str
    before: Any
    after: Any


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened: `kind` config, health (the decided state),
    vantage_health (one vantage's view) or vantage (one went quiet or came
    back); `subject` the resource, as the audit log names it."""

    id: int
    at: float
    kind: str
    subject: str
    data: dict[str, Any]

    def document(self) -> dict[str, Any]:
        """As the event stream and webhooks send it."""
        return {
            "id": self.id,
            "at": datetime.fromtimestamp(self.at, UTC).isoformat(),
            "kind": self.kind,
            "subject": self.subject,
            "data": self.data,
        }


@dataclass(frozen=True, slots=True)
class Delivery:
    """One try at delivering an event to a webhook."""

    event_id: int
    kind: str
    attempt: int
    at: float
    status: int  # the receiver's HTTP status; 0 when none came back
    outcome: str  # delivered, failed (retried later) or dropped (tries used up)
    error: str = ""


@dataclass(frozen=True, slots=True)
class AuditQuery:
    resource: str | None = None  # a prefix: "tm.example./" for a whole zone
    actor: str | None = None
    since: float | None = None
    until: float | None = None
    limit: int = 100


@dataclass(frozen=True, slots=True)
class Step:
    """One step of an import: create, update or delete a zone, a profile, or
    (kind "latency", zone "") replace the latency table."""

    action: ChangeAction
    kind: ChangeKind
    zone: str
    name: str | None
    after: Zone | Profile | LatencyRows | None


class NotFound(LookupError):
    """The zone, profile or endpoint named does not exist."""


class Conflict(ValueError):
    """The change collides with existing data (a duplicate name, say)."""

    def __init__(self, message: str, field: str = "name") -> None:
        super().__init__(message)
        self.field = field


class StoreUnavailable(ConnectionError):
    """The database cannot be reached; callers keep serving what they have."""


class SnapshotReader(Protocol):
    """What a DNS instance reads to build and refresh its snapshot
    (app.refresh): read-only, so a hot standby can serve it."""

    async def generation(self) -> int: ...
    async def pulse(self) -> tuple[int, float | None]: ...
    async def load_all(self) -> tuple[Config, Mapping[int, Health]]: ...
    async def load_changes(self, since: int) -> Changes: ...


class HealthWriter(Protocol):
    """What a prober reads (its own views, to continue their counts) and
    writes (its views, its heartbeat, the pruning of old transitions), all as
    one vantage."""

    async def heartbeat(
        self, now: float, vantage: str = ..., source: str | None = None
    ) -> list[Vantage]: ...
    async def views_of(self, vantage: str) -> dict[int, Health]: ...
    async def record_health(
        self,
        endpoint_id: int,
        health: Health,
        previous: HealthState | None,
        vantage: str = ...,
    ) -> None: ...
    async def record_health_batch(
        self, updates: Sequence[HealthUpdate], vantage: str = ...
    ) -> None: ...
    async def prune_transitions(self, before: float) -> int: ...


class AdminStore(Protocol):
    """What the API and the command line read and change: the configuration,
    tokens and the audit log, with health for display."""

    def written_generation(self) -> int | None: ...
    async def health_of(self, endpoint_ids: Sequence[int]) -> dict[int, Health]: ...
    async def vantage_views(
        self, endpoint_ids: Sequence[int]
    ) -> dict[int, dict[str, Health]]: ...
    async def vantages(self) -> list[Vantage]: ...
    async def events_after(self, last_id: int, limit: int = 100) -> list[Event]: ...
    async def event_bounds(self) -> tuple[int, int]: ...
    async def record_state(
        self, at: float, kind: str, subject: str, data: dict[str, Any], normal: bool
    ) -> bool: ...
    async def create_webhook(self, webhook: Webhook, *, actor: str) -> Webhook: ...
    async def list_webhooks(self) -> list[Webhook]: ...
    async def get_webhook(self, webhook_id: int) -> Webhook: ...
    async def delete_webhook(
        self,
        webhook_id: int,
        *,
        actor: str,
        guard: Callable[[Webhook], None] | None = None,
    ) -> None: ...
    async def webhook_deliveries(self, webhook_id: int) -> list[Delivery]: ...
    async def traffic_series(
        self, zone: str, profile: str, since: int
    ) -> dict[int, dict[str, int]]: ...

    async def list_zones(self) -> list[Zone]: ...
    async def get_zone(self, name: str) -> Zone: ...
    async def create_zone(self, zone: Zone, *, actor: str) -> Zone: ...
    async def update_zone(
        self, name: str, change: ZoneChange, *, actor: str
    ) -> Zone: ...
    async def delete_zone(
        self, name: str, *, actor: str, guard: Callable[[Zone], None] | None = None
    ) -> None: ...

    async def get_rrsets(self, zone: str) -> tuple[StaticRRset, ...]: ...
    async def put_rrset(
        self, zone: str, rrset: StaticRRset, *, actor: str, guard: RRsetGuard = None
    ) -> bool: ...
    async def delete_rrset(
        self, zone: str, name: str, rtype: int, *, actor: str, guard: RRsetGuard = None
    ) -> None: ...

    async def get_profile(self, zone: str, name: str) -> Profile: ...
    async def create_profile(
        self, zone: str, profile: Profile, *, actor: str
    ) -> Profile: ...
    async def update_profile(
        self, zone: str, name: str, change: ProfileChange, *, actor: str, action: str
    ) -> Profile: ...
    async def delete_profile(
        self,
        zone: str,
        name: str,
        *,
        actor: str,
        guard: Callable[[Profile], None] | None = None,
    ) -> None: ...

    async def expire_overrides(self, zone: str, name: str, now: float) -> bool: ...

    async def get_latency(self) -> LatencyRows: ...
    async def replace_latency(
        self, rows: LatencyRows, *, actor: str
    ) -> LatencyRows: ...

    async def transitions(
        self, endpoint_ids: Sequence[int], limit: int
    ) -> list[Transition]: ...

    async def create_token(self, token: Token, *, actor: str) -> Token: ...
    async def list_tokens(self) -> list[tuple[Token, float, float | None]]: ...
    async def revoke_token(self, name: str, *, actor: str) -> None: ...
    async def find_token(self, digest: str) -> Token | None: ...
    async def audit_log(self, query: AuditQuery) -> list[AuditEntry]: ...
    async def apply_steps(self, steps: Sequence[Step], *, actor: str) -> None: ...


class TrafficWriter(Protocol):
    """What a DNS process writes besides nothing: its answer counts."""

    async def add_traffic(self, counts: TrafficCounts) -> None: ...
    async def prune_traffic(self, before: int) -> int: ...


class Store(SnapshotReader, HealthWriter, AdminStore, TrafficWriter, Protocol):
    """Every role's store at once: what `tmdns serve` opens and hands to each
    role by the part of it that role uses."""

    async def ping(self) -> None: ...


class WebhookSender(Protocol):
    """What the webhook deliveries read (receivers, events) and write (their
    cursor, lease and log): bookkeeping, never configuration."""

    async def list_webhooks(self) -> list[Webhook]: ...
    async def events_after(self, last_id: int, limit: int = 100) -> list[Event]: ...
    async def lease_webhook(
        self, webhook_id: int, owner: str, seconds: float
    ) -> bool: ...
    async def advance_webhook(self, webhook_id: int, event_id: int) -> None: ...
    async def log_delivery(self, webhook_id: int, delivery: Delivery) -> None: ...
