"""The health monitor of a profile or endpoint, as the API and export show it."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any, Literal

from pydantic import Field

from app.domain.model import (
    HttpMethod,
    Monitor,
    MonitorProtocol,
    Quorum,
    SipSuccess,
)
from app.schemas.common import (
    HEADER_NAME_PATTERN,
    IP,
    PRINTABLE_PATTERN,
    Port,
    Strict,
)

HeaderName = Annotated[str, Field(pattern=HEADER_NAME_PATTERN, max_length=64)]
HeaderValue = Annotated[str, Field(pattern=PRINTABLE_PATTERN, max_length=1024)]


SCHEDULE_FIELDS = (
    "interval",
    "timeout",
    "tolerated_failures",
    "successes_to_online",
    "quorum",
)


class ProbeIn(Strict):
    """How one check probes: shared by a monitor and each of its checks."""

    protocol: MonitorProtocol = MonitorProtocol.TCP
    port: Port | None = None
    path: str = Field(default="/", pattern=r"^/[\x21-\x7e]*$", max_length=1024)
    host: str | None = Field(
        default=None, pattern=r"^[A-Za-z0-9._:\[\]-]+$", max_length=255
    )
    headers: dict[HeaderName, HeaderValue] = Field(default_factory=dict, max_length=8)
    expected_status: str | None = Field(
        default=None,
        pattern=r"^[1-6]\d{2}(-[1-6]\d{2})?(,[1-6]\d{2}(-[1-6]\d{2})?)*$",
        examples=["200-299,301"],
    )
    method: HttpMethod = HttpMethod.GET
    verify_tls: bool = False
    sip_success: SipSuccess = SipSuccess.CODES
    address: IP | None = Field(default=None, description="probe here, not the endpoint")
    body_contains: str | None = Field(
        default=None,
        min_length=1,
        max_length=255,
        pattern=PRINTABLE_PATTERN,
        description="http/https: up only if the first 5,120 bytes of the body "
        "contain this (case-sensitive), as Route 53's string matching",
        examples=["healthy"],
    )
    invert: bool = Field(
        default=False, description="up when the check fails (Route 53's inverted)"
    )

    def _fields(self) -> dict[str, Any]:
        fields = self.model_dump(include=set(ProbeIn.model_fields) - {"headers"})
        fields["headers"] = tuple(self.headers.items())
        fields["address"] = str(self.address) if self.address else None
        return fields


class CheckIn(ProbeIn):
    """One check of a composite monitor (say SIP OPTIONS on 5061 beside HTTP on
    a management port): it says all of how it probes, with a monitor's
    defaults; when and how often come from the monitor it belongs to."""

    def on(self, schedule: Monitor) -> Monitor:
        return replace(schedule, checks=(), require=0, **self._fields())

    @classmethod
    def from_domain(cls, check: Monitor) -> CheckIn:
        fields: dict[str, Any] = {f: getattr(check, f) for f in ProbeIn.model_fields}
        fields["headers"] = dict(check.headers)
        return cls.model_construct(**fields)


class MonitorIn(ProbeIn):
    interval: float = Field(default=30.0, ge=1, le=3600)
    timeout: float = Field(default=10.0, gt=0, le=3600)
    tolerated_failures: int = Field(default=3, ge=0, le=9)
    successes_to_online: int = Field(default=1, ge=1, le=10)
    checks: list[CheckIn] = Field(
        default_factory=list,
        max_length=4,
        description="a composite monitor: these checks run together on this "
        "monitor's schedule, each saying all of how it probes",
    )
    require: Literal["all", "any"] | Annotated[int, Field(ge=1, le=4)] = Field(
        default="all", description="how many of the checks must be up"
    )
    quorum: Quorum = Field(
        default=Quorum.MAJORITY,
        description="with several probers (vantages): up when any live vantage "
        "sees it up, down only when more than half see it down (majority), or "
        "up only when all do; one vantage decides alone",
    )

    def to_domain(self) -> Monitor:
        """Every field, defaults for those not given (a profile's monitor)."""
        return self._with_checks(
            Monitor(
                **self._fields(),
                **{f: getattr(self, f) for f in SCHEDULE_FIELDS},
            )
        )

    def _with_checks(self, monitor: Monitor) -> Monitor:
        require: Any = {"all": 0, "any": 1}.get(str(self.require), self.require)
        return replace(
            monitor,
            checks=tuple(c.on(monitor) for c in self.checks),
            require=int(require),
        )

    def over(self, base: Monitor) -> Monitor:
        """`base` (the profile's monitor) with only the fields given here
        replaced: an endpoint's `{"path": "/ok2"}` keeps the profile's
        protocol, port, checks and the rest; its checks run on its schedule."""
        full = self.to_domain()
        given = set(self.model_fields_set)
        merged = replace(base, **{f: getattr(full, f) for f in given - {"checks"}})
        checks = full.checks if "checks" in given else merged.checks
        schedule = {f: getattr(merged, f) for f in SCHEDULE_FIELDS}
        return replace(merged, checks=tuple(replace(c, **schedule) for c in checks))

    @classmethod
    def from_domain(cls, m: Monitor) -> MonitorIn:
        fields: dict[str, Any] = {
            f: getattr(m, f)
            for f in cls.model_fields
            if f not in ("headers", "checks", "require")
        }
        require: Any = {0: "all", 1: "any"}.get(m.require, m.require)
        return cls.model_construct(
            **fields,
            headers=dict(m.headers),
            checks=[CheckIn.from_domain(c) for c in m.checks],
            require=require,
        )
