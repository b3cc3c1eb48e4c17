"""The health monitor of a profile or endpoint, as the API and export show it."""

from __future__ import annotations

from typing import Annotated, Self

from pydantic import Field, model_validator

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
        return cls.model_construct(
            **{f: getattr(m, f) for f in cls.model_fields if f != "headers"},
            headers=dict(m.headers),
        )
