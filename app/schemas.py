"""The external shape of tmdns (REST API, and later export/import), in pydantic.

Field names are exactly those of DESIGN §6. Each input model converts to the
domain with to_domain(); each output model is built with from_domain().
Unknown fields are rejected, so a typo is a 422 naming it, not a silent no-op.
"""

from __future__ import annotations

from ipaddress import IPv4Address, IPv6Address, ip_address
from typing import Annotated, Any, Self

import pycountry
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from app.domain import geo, names
from app.domain.model import (
    AllDown,
    Endpoint,
    EndpointKind,
    Failback,
    HealthState,
    HttpMethod,
    IPAddress,
    LatencyRows,
    Location,
    Method,
    Monitor,
    MonitorProtocol,
    Override,
    OverrideState,
    Profile,
    SipSuccess,
    SrvService,
    Zone,
)
from app.domain.ranges import parse_range
from app.domain.regions import region_coordinates


def _ip(value: Any) -> IPAddress:
    """One error in words for a bad address, instead of one per union branch."""
    if isinstance(value, IPv4Address | IPv6Address):
        return value
    if not isinstance(value, str):
        raise ValueError("an IP address must be a string")
    try:
        return ip_address(value.strip())
    except ValueError:
        raise ValueError(f"{value!r} is not an IPv4 or IPv6 address") from None


IP = Annotated[
    IPv4Address | IPv6Address,
    PlainValidator(_ip),
    PlainSerializer(str, return_type=str),
    WithJsonSchema({"type": "string", "format": "ip-address"}),
]
Ttl = Annotated[int, Field(ge=0, le=604800)]
Port = Annotated[int, Field(ge=1, le=65535)]
Rank = Annotated[int, Field(ge=1, le=1000)]
LABEL_PATTERN = r"^[A-Za-z0-9](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?$"
SERVICE_PATTERN = r"^_[A-Za-z0-9-]{1,62}\._[A-Za-z0-9-]{1,62}$"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _dns_name(value: str) -> str:
    try:
        return names.absolute(value)
    except names.BadName as exc:
        raise ValueError(str(exc)) from exc


class MonitorIn(Strict):
    protocol: MonitorProtocol = MonitorProtocol.TCP
    port: Port | None = None
    path: str = Field(default="/", pattern=r"^/", max_length=1024)
    host: str | None = Field(default=None, max_length=255)
    headers: dict[str, str] = Field(default_factory=dict, max_length=8)
    expected_status: str | None = Field(
        default=None,
        pattern=r"^[1-6]\d{2}(-[1-6]\d{2})?(,[1-6]\d{2}(-[1-6]\d{2})?)*$",
        examples=["200-299,301"],
    )
    interval: float = Field(default=30.0, ge=1, le=3600)
    timeout: float = Field(default=10.0, gt=0, le=3600)
    tolerated_failures: int = Field(default=3, ge=0, le=9)
    successes_to_online: int = Field(default=1, ge=1, le=10)
    method: HttpMethod = HttpMethod.GET
    verify_tls: bool = False
    sip_success: SipSuccess = SipSuccess.CODES
    address: IP | None = Field(default=None, description="probe here, not the endpoint")

    @model_validator(mode="after")
    def _timeout_below_interval(self) -> Self:
        if self.timeout >= self.interval:
            raise ValueError("timeout must be below interval")
        return self

    def to_domain(self) -> Monitor:
        fields = self.model_dump(exclude={"headers", "address"})
        return Monitor(
            **fields,
            headers=tuple(self.headers.items()),
            address=str(self.address) if self.address else None,
        )

    @classmethod
    def from_domain(cls, m: Monitor) -> MonitorIn:
        return cls.model_validate(
            {f: getattr(m, f) for f in cls.model_fields if f != "headers"}
            | {"headers": dict(m.headers)}
        )


class SrvIn(Strict):
    service: str = Field(pattern=SERVICE_PATTERN, examples=["_sip._udp"])
    port: Port

    @field_validator("service")
    @classmethod
    def _lower(cls, value: str) -> str:
        return value.lower()


class OverrideIn(Strict):
    state: OverrideState
    reason: str = Field(default="", max_length=500)
    until: float | None = Field(default=None, description="expiry, epoch seconds")


def _geo_code(value: str) -> str:
    """WORLD, a continent as GEO-EU (Azure's spelling), an ISO 3166-1 country or
    an ISO 3166-2 subdivision; anything else is refused with the reason."""
    code = value.strip().upper()
    if code == geo.WORLD:
        return code
    if code.startswith(geo.CONTINENT_PREFIX):
        if code.removeprefix(geo.CONTINENT_PREFIX) in geo.CONTINENTS:
            return code
        raise ValueError(
            f"{value!r}: continents are "
            + ", ".join(geo.CONTINENT_PREFIX + c for c in sorted(geo.CONTINENTS))
        )
    found = _iso_lookup(code)
    if found is None:
        raise ValueError(
            f"{value!r} is not WORLD, GEO-<continent>, an ISO 3166-1 "
            "country or an ISO 3166-2 subdivision"
        )
    return code


def _iso_lookup(code: str) -> object:
    """pycountry's ISO 3166-2 table for subdivisions, ISO 3166-1 for countries."""
    if "-" in code:
        return pycountry.subdivisions.get(code=code)  # type: ignore[no-untyped-call]
    return pycountry.countries.get(alpha_2=code)


def _subnet(value: str) -> str:
    return parse_range(value).text


GeoCode = Annotated[str, AfterValidator(_geo_code)]
Subnet = Annotated[str, AfterValidator(_subnet)]


class LocationIn(Strict):
    """`{"lat": 53.3, "lon": -6.3}` or `{"region": "aws:eu-west-1"}`."""

    lat: float | None = Field(default=None, ge=-90, le=90)
    lon: float | None = Field(default=None, ge=-180, le=180)
    region: str | None = None

    @field_validator("region")
    @classmethod
    def _lower(cls, value: str | None) -> str | None:
        return value.strip().lower() if value else None

    @model_validator(mode="before")
    @classmethod
    def _region_string(cls, value: Any) -> Any:
        return {"region": value} if isinstance(value, str) else value

    @model_validator(mode="after")
    def _complete(self) -> Self:
        if self.region is not None:
            coordinates = region_coordinates(self.region)
            if coordinates is None:
                raise ValueError(
                    f"unknown region {self.region!r} (use provider:id, "
                    "e.g. aws:eu-west-1, azure:westeurope, gcp:us-east1)"
                )
            if self.lat is None and self.lon is None:
                self.lat, self.lon = coordinates
        if self.lat is None or self.lon is None:
            raise ValueError("a location needs 'lat' and 'lon', or a 'region'")
        return self

    def to_domain(self) -> Location:
        assert self.lat is not None and self.lon is not None
        return Location(self.lat, self.lon, self.region)

    @classmethod
    def from_domain(cls, loc: Location) -> LocationIn:
        return cls(lat=loc.latitude, lon=loc.longitude, region=loc.region)


class EndpointIn(Strict):
    name: str = Field(pattern=LABEL_PATTERN, max_length=63)
    kind: EndpointKind = EndpointKind.ADDRESS
    address: IP | None = None
    target: str | None = None
    child: str | None = None
    min_child_endpoints: int = Field(default=1, ge=1, le=1000)
    enabled: bool = True
    priority: Rank | None = None
    weight: Rank = 1
    geo: list[GeoCode] = Field(default_factory=list)
    subnets: list[Subnet] = Field(default_factory=list)
    location: LocationIn | None = None
    port: Port | None = None
    always_serve: bool = False
    monitor: MonitorIn | None = None
    override: OverrideIn | None = None

    @field_validator("name")
    @classmethod
    def _lower(cls, value: str) -> str:
        return value.lower()

    @field_validator("child")
    @classmethod
    def _child(cls, value: str | None) -> str | None:
        return None if value is None else value.strip().lower()

    @field_validator("target")
    @classmethod
    def _target(cls, value: str | None) -> str | None:
        return None if value is None else _dns_name(value)

    @model_validator(mode="after")
    def _kind_fields(self) -> Self:
        if self.kind is EndpointKind.ADDRESS and self.address is None:
            raise ValueError("an address endpoint needs 'address'")
        if self.kind is EndpointKind.HOST and self.target is None:
            raise ValueError("a host endpoint needs 'target'")
        if self.kind is EndpointKind.NESTED and self.child is None:
            raise ValueError("a nested endpoint needs 'child'")
        return self

    def to_domain(self, zone: str, priority: int, id: int = 0) -> Endpoint:
        """`zone` makes a nested child's name relative, as profiles are named."""
        child = names.relative(self.child, zone) if self.child else None
        return Endpoint(
            id=id,
            name=self.name,
            kind=self.kind,
            address=self.address,
            target=self.target,
            child=child,
            min_child_endpoints=self.min_child_endpoints,
            enabled=self.enabled,
            priority=self.priority or priority,
            weight=self.weight,
            geo=tuple(self.geo),
            subnets=tuple(self.subnets),
            location=self.location.to_domain() if self.location else None,
            port=self.port,
            always_serve=self.always_serve,
            monitor=self.monitor.to_domain() if self.monitor else None,
            override=(
                Override(self.override.state, self.override.reason, self.override.until)
                if self.override
                else None
            ),
        )


class EndpointOut(EndpointIn):
    model_config = ConfigDict(extra="ignore")

    fqdn: str | None = None
    state: str | None = None

    @classmethod
    def from_domain(
        cls, e: Endpoint, profile_fqdn: str, state: str | None = None
    ) -> Self:
        return cls(
            name=e.name,
            kind=e.kind,
            address=e.address,
            target=e.target,
            child=e.child,
            min_child_endpoints=e.min_child_endpoints,
            enabled=e.enabled,
            priority=e.priority,
            weight=e.weight,
            geo=list(e.geo),
            subnets=list(e.subnets),
            location=LocationIn.from_domain(e.location) if e.location else None,
            port=e.port,
            always_serve=e.always_serve,
            monitor=MonitorIn.from_domain(e.monitor) if e.monitor else None,
            override=(
                OverrideIn(
                    state=e.override.state,
                    reason=e.override.reason,
                    until=e.override.until,
                )
                if e.override
                else None
            ),
            fqdn=f"{e.name}.{profile_fqdn}" if e.kind is EndpointKind.ADDRESS else None,
            state=state,
        )


class EndpointPage(Strict):
    """Query parameters of the endpoint list."""

    limit: int = Field(default=100, ge=1, le=1000)
    offset: int = Field(default=0, ge=0)
    state: HealthState | None = None
    enabled: bool | None = None


class ProfileIn(Strict):
    name: str = Field(min_length=1, max_length=255)
    method: Method
    ttl: Ttl = 60
    enabled: bool = True
    monitor: MonitorIn = Field(default_factory=MonitorIn)
    srv: list[SrvIn] = Field(default_factory=list)
    max_return: int = Field(default=2, ge=1, le=10)
    failback: Failback = Failback.HOMING
    all_down: AllDown = AllDown.SERVE_ALL
    fallback: IP | None = None
    geo_failover: bool = False
    endpoints: list[EndpointIn] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if value.strip() == names.APEX:
            return names.APEX
        _dns_name(value)
        return value

    @model_validator(mode="after")
    def _fallback_given(self) -> Self:
        if self.all_down is AllDown.FALLBACK and self.fallback is None:
            raise ValueError("all_down 'fallback' needs a 'fallback' address")
        return self

    def to_domain(self, zone: str, ids: dict[str, int] | None = None) -> Profile:
        """Endpoints without a priority get the next free one, in listed order."""
        ids = ids or {}
        taken = {e.priority for e in self.endpoints if e.priority}
        free = (p for p in range(1, 1001) if p not in taken)
        endpoints = tuple(
            e.to_domain(zone, e.priority or next(free), ids.get(e.name, 0))
            for e in self.endpoints
        )
        return Profile(
            name=names.relative(self.name, zone),
            method=self.method,
            ttl=self.ttl,
            enabled=self.enabled,
            monitor=self.monitor.to_domain(),
            srv=tuple(SrvService(s.service, s.port) for s in self.srv),
            max_return=self.max_return,
            failback=self.failback,
            all_down=self.all_down,
            fallback=self.fallback,
            geo_failover=self.geo_failover,
            endpoints=endpoints,
        )


class ProfileOut(ProfileIn):
    model_config = ConfigDict(extra="ignore")

    fqdn: str
    endpoints: list[EndpointOut] = Field(default_factory=list)  # type: ignore[assignment]

    @classmethod
    def from_domain(
        cls, p: Profile, zone: str, states: dict[int, str] | None = None
    ) -> Self:
        fqdn = names.join(p.name, zone)
        states = states or {}
        return cls(
            name=p.name,
            fqdn=fqdn,
            method=p.method,
            ttl=p.ttl,
            enabled=p.enabled,
            monitor=MonitorIn.from_domain(p.monitor),
            srv=[SrvIn(service=s.service, port=s.port) for s in p.srv],
            max_return=p.max_return,
            failback=p.failback,
            all_down=p.all_down,
            fallback=p.fallback,
            geo_failover=p.geo_failover,
            endpoints=[
                EndpointOut.from_domain(e, fqdn, states.get(e.id)) for e in p.endpoints
            ],
        )


class ZoneIn(Strict):
    name: str = Field(min_length=1, max_length=255)
    ns: list[str] = Field(min_length=1, max_length=13)
    soa_email: str | None = Field(default=None, pattern=r"^[^@\s]+@[^@\s]+$")
    negative_ttl: Ttl = 60
    glue: dict[str, list[IP]] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return _dns_name(value)

    @field_validator("ns")
    @classmethod
    def _ns(cls, value: list[str]) -> list[str]:
        return [_dns_name(v) for v in value]

    @field_validator("glue")
    @classmethod
    def _glue(
        cls, value: dict[str, list[IP]], info: ValidationInfo
    ) -> dict[str, list[IP]]:
        """In-zone name servers need their addresses (glue) or the delegation cannot
        be followed; glue for a host that is not a name server is a mistake."""
        glue = {_dns_name(k): v for k, v in value.items()}
        zone, ns = info.data.get("name"), info.data.get("ns")
        if zone is None or ns is None:
            return glue  # reported on those fields already
        for host in ns:
            if host.endswith("." + zone) and not glue.get(host):
                raise ValueError(
                    f"name server {host} is inside the zone: give its addresses"
                )
        for host in glue:
            if host not in ns:
                raise ValueError(f"{host} is not one of the zone's name servers ('ns')")
        return glue

    def to_domain(self) -> Zone:
        glue: tuple[tuple[str, IPAddress], ...] = tuple(
            (host, addr) for host, addrs in self.glue.items() for addr in addrs
        )
        return Zone(
            name=self.name,
            ns=tuple(self.ns),
            soa_email=self.soa_email or f"hostmaster@{self.name.rstrip('.')}",
            negative_ttl=self.negative_ttl,
            glue=glue,
        )


class ZoneOut(ZoneIn):
    soa_email: str

    @classmethod
    def from_domain(cls, z: Zone) -> Self:
        glue: dict[str, list[IP]] = {}
        for host, addr in z.glue:
            glue.setdefault(host, []).append(addr)
        return cls(
            name=z.name,
            ns=list(z.ns),
            soa_email=z.soa_email,
            negative_ttl=z.negative_ttl,
            glue=glue,
        )


def merge_patch(target: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """RFC 7396 JSON merge patch: objects merge, null removes, the rest replaces."""
    merged = dict(target)
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge_patch(merged[key], value)
        else:
            merged[key] = value
    return merged


def profile_document(p: Profile, zone: str) -> dict[str, Any]:
    """The profile as a ProfileIn body: what a PATCH is merged into."""
    return ProfileOut.from_domain(p, zone).model_dump(
        mode="json",
        exclude_none=True,
        exclude={"fqdn": True, "endpoints": {"__all__": {"fqdn", "state"}}},
    )


def endpoint_document(e: Endpoint) -> dict[str, Any]:
    """The endpoint as an EndpointIn body: what a PATCH is merged into."""
    return EndpointOut.from_domain(e, ".").model_dump(
        mode="json", exclude_none=True, exclude={"fqdn", "state"}
    )


def zone_document(z: Zone) -> dict[str, Any]:
    return ZoneOut.from_domain(z).model_dump(mode="json", exclude_none=True)


class LatencyEntryIn(Strict):
    network: Subnet = Field(examples=["198.51.100.0/24"])
    rtt: dict[str, Annotated[float, Field(ge=0)]] = Field(
        min_length=1, description="location (an endpoint's region) → round trip, ms"
    )

    @field_validator("rtt")
    @classmethod
    def _lower(cls, value: dict[str, float]) -> dict[str, float]:
        return {k.strip().lower(): v for k, v in value.items()}


class LatencyIn(Strict):
    """The whole latency table for performance routing, replaced at once."""

    entries: list[LatencyEntryIn] = Field(max_length=100_000)

    @field_validator("entries")
    @classmethod
    def _distinct(cls, value: list[LatencyEntryIn]) -> list[LatencyEntryIn]:
        seen: set[str] = set()
        for entry in value:
            if entry.network in seen:
                raise ValueError(f"network {entry.network} is listed twice")
            seen.add(entry.network)
        return value

    def to_domain(self) -> LatencyRows:
        return tuple((e.network, e.rtt) for e in self.entries)

    @classmethod
    def from_domain(cls, rows: LatencyRows) -> LatencyIn:
        return cls(entries=[LatencyEntryIn(network=n, rtt=dict(r)) for n, r in rows])
