"""A zone: its name servers, SOA contact, negative TTL and glue, in and out."""

from __future__ import annotations

from typing import Self

from pydantic import Field, ValidationInfo, field_validator

from app.domain.model import IPAddress, Zone
from app.schemas.common import IP, Strict, Ttl, dns_name


class ZoneIn(Strict):
    name: str = Field(min_length=1, max_length=255)
    ns: list[str] = Field(min_length=1, max_length=13)
    soa_email: str | None = Field(default=None, pattern=r"^[^@\s]+@[^@\s]+$")
    negative_ttl: Ttl = 60
    glue: dict[str, list[IP]] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return dns_name(value)

    @field_validator("ns")
    @classmethod
    def _ns(cls, value: list[str]) -> list[str]:
        return [dns_name(v) for v in value]

    @field_validator("glue")
    @classmethod
    def _glue(
        cls, value: dict[str, list[IP]], info: ValidationInfo
    ) -> dict[str, list[IP]]:
        """In-zone name servers need their addresses (glue) or the delegation cannot
        be followed; glue for a host that is not a name server is a mistake."""
        glue = {dns_name(k): v for k, v in value.items()}
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
