"""An endpoint of a profile: its location, override, input and output shapes."""

from __future__ import annotations

import time
from typing import Any, Self

from pydantic import ConfigDict, Field, field_validator, model_validator

from app.domain import names
from app.domain.model import (
    Endpoint,
    EndpointKind,
    HealthState,
    Location,
    Monitor,
    Override,
    OverrideState,
)
from app.domain.regions import region_coordinates
from app.domain.validation import Invalid
from app.schemas.common import (
    IP,
    IP_SCHEMA,
    LABEL_PATTERN,
    PRINTABLE_PATTERN,
    DnsName,
    GeoCode,
    Port,
    Rank,
    Strict,
    Subnet,
    Weight,
    dns_name,
)
from app.schemas.monitor import MonitorIn

DEFAULT_MONITOR = Monitor()


class OverrideIn(Strict):
    state: OverrideState
    reason: str = Field(default="", max_length=500, pattern=PRINTABLE_PATTERN)
    until: float | None = Field(
        default=None, gt=0, description="expiry, epoch seconds; in the future"
    )

    @field_validator("until")
    @classmethod
    def _ahead(cls, value: float | None) -> float | None:
        """An override that has already run out would do nothing but mislead."""
        if value is not None and value <= time.time():
            raise ValueError(
                f"{value} is in the past: give a future time, or no 'until'"
            )
        return value


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
        return cls.model_construct(
            lat=loc.latitude, lon=loc.longitude, region=loc.region
        )


def _kind_rules(schema: dict[str, Any]) -> None:
    """What each kind needs, in the document as the domain checks it: an
    address endpoint (the default kind) its address, a host its target, a
    nested endpoint its child."""

    def needs(kind: str, field: str, value: dict[str, Any]) -> dict[str, Any]:
        when: dict[str, Any] = {
            "properties": {"kind": {"const": kind}},
            "required": ["kind"],
        }
        if kind == EndpointKind.ADDRESS:
            when = {"anyOf": [{"not": {"required": ["kind"]}}, when]}
        return {
            "if": when,
            "then": {"required": [field], "properties": {field: value}},
        }

    text = {"type": "string"}
    schema["allOf"] = [
        needs(EndpointKind.ADDRESS, "address", IP_SCHEMA),
        needs(EndpointKind.HOST, "target", text),
        needs(EndpointKind.NESTED, "child", text),
    ]


class EndpointIn(Strict):
    model_config = ConfigDict(json_schema_extra=_kind_rules)

    name: str = Field(pattern=LABEL_PATTERN, max_length=63)
    kind: EndpointKind = EndpointKind.ADDRESS
    address: IP | None = None
    target: DnsName | None = None
    child: DnsName | None = None
    min_child_endpoints: int = Field(default=1, ge=1, le=1000)
    min_child_endpoints_ipv4: int = Field(
        default=0, ge=0, le=1000, description="of them, answering A (Azure's)"
    )
    min_child_endpoints_ipv6: int = Field(
        default=0, ge=0, le=1000, description="of them, answering AAAA (Azure's)"
    )
    enabled: bool = True
    priority: Rank | None = None
    weight: Weight = 1
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
        return None if value is None else dns_name(value)

    def to_domain(
        self, zone: str, priority: int, id: int = 0, monitor: Monitor = DEFAULT_MONITOR
    ) -> Endpoint:
        """`zone` makes a nested child's name relative, as profiles are named;
        `monitor` is the profile's, which the endpoint's own fields override."""
        try:
            child = names.relative(self.child, zone) if self.child else None
        except names.BadName as exc:
            raise Invalid.one("child", str(exc)) from exc
        return Endpoint(
            id=id,
            name=self.name,
            kind=self.kind,
            address=self.address,
            target=self.target,
            child=child,
            min_child_endpoints=self.min_child_endpoints,
            min_child_endpoints_ipv4=self.min_child_endpoints_ipv4,
            min_child_endpoints_ipv6=self.min_child_endpoints_ipv6,
            enabled=self.enabled,
            priority=self.priority or priority,
            weight=self.weight,
            geo=tuple(self.geo),
            subnets=tuple(self.subnets),
            location=self.location.to_domain() if self.location else None,
            port=self.port,
            always_serve=self.always_serve,
            monitor=self.monitor.over(monitor) if self.monitor else None,
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
    ) -> EndpointOut:
        return cls.model_construct(
            name=e.name,
            kind=e.kind,
            address=e.address,
            target=e.target,
            child=e.child,
            min_child_endpoints=e.min_child_endpoints,
            min_child_endpoints_ipv4=e.min_child_endpoints_ipv4,
            min_child_endpoints_ipv6=e.min_child_endpoints_ipv6,
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
                OverrideIn.model_construct(
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
