"""The health monitor of a profile or endpoint, as the API and export show it."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

from pydantic import Field

from app.domain.model import HttpMethod, Monitor, MonitorProtocol, SipSuccess
from app.schemas.common import (
    HEADER_NAME_PATTERN,
    IP,
    PRINTABLE_PATTERN,
    Port,
    Strict,
)

HeaderName = Annotated[str, Field(pattern=HEADER_NAME_PATTERN, max_length=64)]
HeaderValue = Annotated[str, Field(pattern=PRINTABLE_PATTERN, max_length=1024)]


class MonitorIn(Strict):
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
    interval: float = Field(default=30.0, ge=1, le=3600)
    timeout: float = Field(default=10.0, gt=0, le=3600)
    tolerated_failures: int = Field(default=3, ge=0, le=9)
    successes_to_online: int = Field(default=1, ge=1, le=10)
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

    def to_domain(self) -> Monitor:
        """Every field, defaults for those not given (a profile's monitor)."""
        fields = self.model_dump(exclude={"headers", "address"})
        return Monitor(
            **fields,
            headers=tuple(self.headers.items()),
            address=str(self.address) if self.address else None,
        )

    def over(self, base: Monitor) -> Monitor:
        """`base` (the profile's monitor) with only the fields given here
        replaced: an endpoint's `{"path": "/ok2"}` keeps the profile's
        protocol, port and the rest."""
        full = self.to_domain()
        return replace(base, **{f: getattr(full, f) for f in self.model_fields_set})

    @classmethod
    def from_domain(cls, m: Monitor) -> MonitorIn:
        return cls.model_construct(
            **{f: getattr(m, f) for f in cls.model_fields if f != "headers"},
            headers=dict(m.headers),
        )
