"""Immutable configuration values (DESIGN §2). No I/O, no validation beyond types."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from ipaddress import IPv4Address, IPv6Address

IPAddress = IPv4Address | IPv6Address
LatencyRows = tuple[tuple[str, Mapping[str, float]], ...]


class Method(StrEnum):
    PRIORITY = "priority"
    WEIGHTED = "weighted"
    PERFORMANCE = "performance"
    GEOGRAPHIC = "geographic"
    MULTIVALUE = "multivalue"
    SUBNET = "subnet"


class EndpointKind(StrEnum):
    ADDRESS = "address"
    HOST = "host"
    NESTED = "nested"


class Failback(StrEnum):
    HOMING = "homing"
    PARKING = "parking"


class OnStale(StrEnum):
    """What DNS does while the prober has gone quiet (its heartbeat older than
    3 of the profile's intervals): its last states may be wrong either way."""

    KEEP = "keep"  # answer from the last states
    SERVE_ALL = "serve_all"  # every enabled endpoint, as if unmonitored


class Quorum(StrEnum):
    """How the live vantages' views of an endpoint make its state (Route 53
    and NS1 count several checkers): with one vantage all three agree."""

    ANY = "any"  # up when any live vantage sees it up
    MAJORITY = "majority"  # down only when more than half see it down
    ALL = "all"  # up only when every live vantage sees it up


class AllDown(StrEnum):
    SERVE_ALL = "serve_all"
    NODATA = "nodata"
    FALLBACK = "fallback"


class MonitorProtocol(StrEnum):
    HTTP = "http"
    HTTPS = "https"
    TCP = "tcp"
    SIP_UDP = "sip-udp"
    SIP_TCP = "sip-tcp"
    SIP_TLS = "sip-tls"
    NONE = "none"


class HttpMethod(StrEnum):
    GET = "GET"
    HEAD = "HEAD"


class SipSuccess(StrEnum):
    """What a SIP OPTIONS answer must be to count as up."""

    CODES = "codes"  # a final response whose code is in expected_status (default 2xx)
    ANY_RESPONSE = "any_response"  # alive is enough: some SBCs answer OPTIONS 4xx/5xx


class HealthState(StrEnum):
    CHECKING = "checking"
    ONLINE = "online"
    OFFLINE = "offline"
    UNMONITORED = "unmonitored"
    DISABLED = "disabled"
    ALWAYS_SERVE = "always_serve"  # never probed, always answered (Azure's flag)


class OverrideState(StrEnum):
    UP = "up"
    DOWN = "down"
    DRAIN = "drain"


@dataclass(frozen=True, slots=True)
class Monitor:
    """How the prober checks an endpoint. Defaults follow DESIGN §5."""

    protocol: MonitorProtocol = MonitorProtocol.TCP
    port: int | None = None
    path: str = "/"
    host: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    expected_status: str | None = None
    interval: float = 30.0
    timeout: float = 10.0
    tolerated_failures: int = 3
    successes_to_online: int = 1
    method: HttpMethod = HttpMethod.GET
    verify_tls: bool = False  # off by default, as Azure
    sip_success: SipSuccess = SipSuccess.CODES
    address: str | None = None  # probe here instead of the served address
    # http/https: up only if this appears in the first BODY_WINDOW bytes.
    body_contains: str | None = None
    invert: bool = False  # up when the check fails (Route 53's inverted check)
    # A composite monitor: these checks, each this monitor with its own fields
    # changed, run together; up when `require` of them are up (0: all).
    checks: tuple[Monitor, ...] = ()
    require: int = 0
    quorum: Quorum = Quorum.MAJORITY  # over the vantages whose heartbeat is fresh

    def required(self) -> int:
        """How many of the checks must be up."""
        return self.require or len(self.checks)


@dataclass(frozen=True, slots=True)
class SrvService:
    service: str  # "_sip._udp": the two leading labels of the SRV owner name
    port: int
    # The endpoints that serve it, by name; () for all of the profile's.
    endpoints: tuple[str, ...] = ()
    # (order, preference) of the NAPTR record that points to it (RFC 3263);
    # None: no NAPTR names it.
    naptr: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class MinAvailable:
    """gdnsd's up_thresh: with fewer endpoints of a family available than this,
    a profile answers as its all_down policy says (serve_all: every enabled
    endpoint) rather than funnel every client into the few survivors. Written
    "2" (a count) or "50%" (of the family's enabled endpoints, rounded up)."""

    count: int = 0
    percent: int = 0

    @classmethod
    def parse(cls, text: str) -> MinAvailable:
        if text.endswith("%"):
            return cls(percent=int(text[:-1]))
        return cls(count=int(text))

    def __str__(self) -> str:
        return f"{self.percent}%" if self.percent else str(self.count)

    def of(self, enabled: int) -> int:
        """How many must be available out of `enabled`."""
        return max(self.count, -(-enabled * self.percent // 100))


@dataclass(frozen=True, slots=True)
class Override:
    state: OverrideState
    reason: str = ""
    until: float | None = None  # epoch seconds; None = until removed


@dataclass(frozen=True, slots=True)
class Location:
    """Where an endpoint is, for performance routing: coordinates, and the named
    region they came from when the operator gave a region."""

    latitude: float
    longitude: float
    region: str | None = None


@dataclass(frozen=True, slots=True)
class Endpoint:
    name: str
    kind: EndpointKind = EndpointKind.ADDRESS
    address: IPAddress | None = None
    target: str | None = None
    child: str | None = None  # nested: the child profile's name in the same zone
    min_child_endpoints: int = 1
    # Azure's MinChildEndpointsIPv4/IPv6: of those, how many must answer A /
    # AAAA (0: no requirement).
    min_child_endpoints_ipv4: int = 0
    min_child_endpoints_ipv6: int = 0
    enabled: bool = True
    priority: int = 1
    weight: int = 1
    geo: tuple[str, ...] = ()
    subnets: tuple[str, ...] = ()
    location: Location | None = None
    port: int | None = None
    always_serve: bool = False
    monitor: Monitor | None = None  # None: the profile's monitor
    override: Override | None = None
    id: int = 0  # assigned by the store; 0 before it is saved


@dataclass(frozen=True, slots=True)
class Profile:
    name: str  # relative to the zone; "@" is the apex
    method: Method
    ttl: int = 60
    enabled: bool = True
    monitor: Monitor = field(default_factory=Monitor)
    srv: tuple[SrvService, ...] = ()
    max_return: int = 2
    failback: Failback = Failback.HOMING
    all_down: AllDown = AllDown.SERVE_ALL
    fallback: IPAddress | None = None
    geo_failover: bool = False
    endpoints: tuple[Endpoint, ...] = ()
    id: int = 0
    # The TTL while the profile is degraded (an endpoint unavailable), so that
    # resolvers come back sooner after a recovery; None: half the TTL (gdnsd).
    ttl_degraded: int | None = None
    min_available: MinAvailable | None = None
    on_stale: OnStale = OnStale.KEEP

    @property
    def degraded_ttl(self) -> int:
        if self.ttl_degraded is not None:
            return self.ttl_degraded
        return (self.ttl + 1) // 2


@dataclass(frozen=True, slots=True)
class StaticData:
    """One record's data of a static rrset: as the operator wrote it (the
    API, export and explain show it) and on the wire, uncompressed (what DNS
    sends), both made once when the rrset was validated."""

    text: str
    wire: bytes


@dataclass(frozen=True, slots=True)
class StaticRRset:
    """Records that are not routed: `_acme-challenge` TXT, MX, CAA, a CNAME,
    a delegation (NS) and its glue. `name` is absolute and lowercase; `rtype`
    the IANA number."""

    name: str
    rtype: int
    ttl: int
    records: tuple[StaticData, ...]


@dataclass(frozen=True, slots=True)
class Zone:
    name: str  # canonical absolute form: "tm.example."
    ns: tuple[str, ...]
    soa_email: str
    negative_ttl: int = 60
    glue: tuple[tuple[str, IPAddress], ...] = ()
    profiles: tuple[Profile, ...] = ()
    id: int = 0
    rrsets: tuple[StaticRRset, ...] = ()  # sorted by (name, rtype)


@dataclass(frozen=True, slots=True)
class Health:
    """What the prober last concluded about one endpoint."""

    state: HealthState
    since: float
    reason: str = ""
    failures: int = 0
    successes: int = 0
    latency_ms: float | None = None
    checked_at: float | None = None


@dataclass(frozen=True, slots=True)
class Quarantined:
    """A stored profile that could not be loaded or compiled (domain/quarantine)."""

    profile_id: int
    zone: str
    name: str
    reason: str  # in words, naming the field where known
    kept: bool = False  # its last good version still answers

    def keeping(self) -> Quarantined:
        return replace(self, kept=True)


class ChangeAction(StrEnum):
    """What one step of an import does (app.transfer plans it, the store applies it)."""

    CREATE = "create"
    UPDATE = "update"
    DELETE = "delete"


class ChangeKind(StrEnum):
    """What one step of an import is about."""

    ZONE = "zone"
    PROFILE = "profile"
    LATENCY = "latency"  # the whole latency table (the zone is "")


@dataclass(frozen=True, slots=True)
class Config:
    """The whole configuration, as the snapshot compiler needs it."""

    zones: tuple[Zone, ...] = ()
    latency: LatencyRows = ()  # (client network, {location: rtt ms}) as entered
    parked: Mapping[int, int] = field(default_factory=dict)  # profile id → endpoint id
    # Profiles the store could not read, by id: not in `zones`.
    broken: Mapping[int, Quarantined] = field(default_factory=dict)


DEFAULT_PORTS = {
    MonitorProtocol.HTTP: 80,
    MonitorProtocol.HTTPS: 443,
    MonitorProtocol.TCP: 80,  # Azure's default monitor port
    MonitorProtocol.SIP_UDP: 5060,
    MonitorProtocol.SIP_TCP: 5060,
    MonitorProtocol.SIP_TLS: 5061,
}


def effective_monitor(profile: Profile, endpoint: Endpoint) -> Monitor:
    """The endpoint's own monitor where it has one, else its profile's."""
    return endpoint.monitor or profile.monitor
