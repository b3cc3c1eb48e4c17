"""A profile (one traffic-managed name) with its SRV services, in and out."""

from __future__ import annotations

import re
from dataclasses import replace

from pydantic import ConfigDict, Field, field_validator

from app.domain import names
from app.domain.model import (
    AllDown,
    Failback,
    Method,
    MinAvailable,
    OnStale,
    Profile,
    Quarantined,
    SrvService,
)
from app.domain.records import NAPTR_ORDER, NAPTR_PREFERENCE, NAPTR_SERVICES
from app.domain.validation import Invalid
from app.schemas.common import (
    IP,
    NAME_PATTERN,
    SERVICE_PATTERN,
    Port,
    Strict,
    Ttl,
    dns_name,
)
from app.schemas.endpoints import EndpointIn, EndpointOut
from app.schemas.monitor import MonitorIn


class SrvIn(Strict):
    service: str = Field(pattern=SERVICE_PATTERN, examples=["_sip._udp"])
    port: Port
    endpoints: list[str] = Field(
        default_factory=list,
        max_length=1000,
        description="the endpoints that serve this service, by name (default: "
        "all): a transport only some elements offer, e.g. TLS",
    )

    @field_validator("service")
    @classmethod
    def _lower(cls, value: str) -> str:
        return value.lower()

    @field_validator("endpoints")
    @classmethod
    def _names(cls, value: list[str]) -> list[str]:
        return [v.lower() for v in value]


class NaptrIn(Strict):
    """One NAPTR record of the profile's name (RFC 3263), pointing to one of
    its SIP SRV services."""

    service: str = Field(pattern=SERVICE_PATTERN, examples=["_sips._tcp"])
    order: int = Field(default=NAPTR_ORDER, ge=0, le=65535)
    preference: int = Field(ge=0, le=65535, examples=[10])

    @field_validator("service")
    @classmethod
    def _lower(cls, value: str) -> str:
        return value.lower()


class ProfileIn(Strict):
    name: str = Field(pattern=rf"^@$|{NAME_PATTERN}", max_length=254)
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
    ttl_degraded: Ttl | None = Field(
        default=None,
        description="the TTL while an endpoint is unavailable (default: half the "
        "ttl, rounded up), so resolvers come back sooner after a recovery",
    )
    min_available: int | str | None = Field(
        default=None,
        description="fewer endpoints of a family available than this (a count, "
        'or "50%" of the enabled ones) and the profile answers as all_down says '
        "(serve_all: every enabled endpoint), as gdnsd's up_thresh",
        examples=[2, "50%"],
    )
    on_stale: OnStale = Field(
        default=OnStale.KEEP,
        description="while the prober is silent (no heartbeat for 3 intervals): "
        "keep the last states, or serve_all enabled endpoints",
    )
    naptr: bool | list[NaptrIn] = Field(
        default=False,
        description="NAPTR records at the profile's name for its SIP services "
        "(RFC 3263): true for one per SIP service (TLS, then TCP, then UDP), or a "
        "list to set order and preference; a service none of whose endpoints is "
        "available is left out",
    )
    endpoints: list[EndpointIn] = Field(default_factory=list, max_length=1000)

    @field_validator("min_available")
    @classmethod
    def _min_available(cls, value: int | str | None) -> int | str | None:
        if value is None:
            return None
        if isinstance(value, bool):
            raise ValueError('a count (2) or a share ("50%"), not true or false')
        if isinstance(value, int):
            if not 1 <= value <= 1000:
                raise ValueError("a count is 1–1000")
            return value
        share = re.fullmatch(r"(\d{1,3})%", value)
        if share is None or not 1 <= int(share[1]) <= 100:
            raise ValueError('a count (2) or a share of 1–100 % ("50%")')
        return value

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if value.strip() == names.APEX:
            return names.APEX
        dns_name(value)
        return value

    def to_domain(self, zone: str, ids: dict[str, int] | None = None) -> Profile:
        """Endpoints without a priority get the next free one, in listed order."""
        ids = ids or {}
        taken = {e.priority for e in self.endpoints if e.priority}
        free = iter([p for p in range(1, 1001) if p not in taken])
        monitor = self.monitor.to_domain()
        endpoints = []
        for i, e in enumerate(self.endpoints):
            priority = e.priority or next(free, None)
            if priority is None:
                raise Invalid.one("endpoints", "more endpoints than priorities 1–1000")
            try:
                endpoints.append(
                    e.to_domain(zone, priority, ids.get(e.name, 0), monitor)
                )
            except Invalid as exc:
                raise Invalid(
                    [replace(p, field=f"endpoints.{i}.{p.field}") for p in exc.problems]
                ) from exc
        try:
            name = names.relative(self.name, zone)
        except names.BadName as exc:
            raise Invalid.one("name", str(exc)) from exc
        return Profile(
            name=name,
            method=self.method,
            ttl=self.ttl,
            enabled=self.enabled,
            monitor=monitor,
            srv=self._services(),
            max_return=self.max_return,
            failback=self.failback,
            all_down=self.all_down,
            fallback=self.fallback,
            geo_failover=self.geo_failover,
            ttl_degraded=self.ttl_degraded,
            min_available=(
                None
                if self.min_available is None
                else MinAvailable.parse(str(self.min_available))
            ),
            on_stale=self.on_stale,
            endpoints=tuple(endpoints),
        )

    def _services(self) -> tuple[SrvService, ...]:
        """The SRV services, each with the NAPTR that names it, if any."""
        if self.naptr is True:
            wanted = {
                s.service: (NAPTR_ORDER, NAPTR_PREFERENCE[s.service])
                for s in self.srv
                if s.service in NAPTR_SERVICES
            }
            if not wanted:
                raise Invalid.one(
                    "naptr",
                    "NAPTR records point to SIP services: give the profile "
                    + " or ".join(sorted(NAPTR_SERVICES))
                    + " in 'srv'",
                )
        else:
            wanted = {}
            for i, n in enumerate(self.naptr or ()):
                if n.service not in NAPTR_SERVICES:
                    raise Invalid.one(
                        f"naptr.{i}.service",
                        f"{n.service} has no NAPTR service: one of "
                        + ", ".join(sorted(NAPTR_SERVICES)),
                    )
                if n.service not in {s.service for s in self.srv}:
                    raise Invalid.one(
                        f"naptr.{i}.service", f"{n.service} is not in the profile's srv"
                    )
                wanted[n.service] = (n.order, n.preference)
        return tuple(
            SrvService(s.service, s.port, tuple(s.endpoints), wanted.get(s.service))
            for s in self.srv
        )


class QuarantineOut(Strict):
    """Why DNS does not answer from this stored version of the profile."""

    reason: str
    kept: bool  # the last good version still answers; else the profile is left out


class ProfileOut(ProfileIn):
    model_config = ConfigDict(extra="ignore")

    fqdn: str
    endpoints: list[EndpointOut] = Field(default_factory=list)  # type: ignore[assignment]
    quarantine: QuarantineOut | None = None

    @classmethod
    def from_domain(
        cls,
        p: Profile,
        zone: str,
        states: dict[int, str] | None = None,
        quarantine: Quarantined | None = None,
    ) -> ProfileOut:
        fqdn = names.join(p.name, zone)
        states = states or {}
        return cls.model_construct(
            quarantine=(
                None
                if quarantine is None
                else QuarantineOut.model_construct(
                    reason=quarantine.reason, kept=quarantine.kept
                )
            ),
            name=p.name,
            fqdn=fqdn,
            method=p.method,
            ttl=p.ttl,
            enabled=p.enabled,
            monitor=MonitorIn.from_domain(p.monitor),
            srv=[
                SrvIn.model_construct(
                    service=s.service, port=s.port, endpoints=list(s.endpoints)
                )
                for s in p.srv
            ],
            # As written back it reads the same: false, or the list.
            naptr=[
                NaptrIn.model_construct(
                    service=s.service, order=s.naptr[0], preference=s.naptr[1]
                )
                for s in p.srv
                if s.naptr is not None
            ]
            or False,
            max_return=p.max_return,
            failback=p.failback,
            all_down=p.all_down,
            fallback=p.fallback,
            geo_failover=p.geo_failover,
            ttl_degraded=p.ttl_degraded,
            min_available=_min_available_out(p.min_available),
            on_stale=p.on_stale,
            endpoints=[
                EndpointOut.from_domain(e, fqdn, states.get(e.id)) for e in p.endpoints
            ],
        )


def _min_available_out(value: MinAvailable | None) -> int | str | None:
    """As it was written: a count as a number, a share as "50%"."""
    if value is None:
        return None
    return str(value) if value.percent else value.count
