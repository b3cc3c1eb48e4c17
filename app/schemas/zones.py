"""A zone: its name servers, SOA contact, negative TTL and glue, in and out."""

from __future__ import annotations

from pydantic import Field, field_validator

from app.domain.model import IPAddress, Zone
from app.schemas.common import IP, DnsName, Strict, Ttl, dns_name


class ZoneIn(Strict):
    name: DnsName
    ns: list[DnsName] = Field(min_length=1, max_length=13)
    # A printable mailbox at a host name: the SOA RNAME is built from it.
    soa_email: str | None = Field(
        default=None,
        max_length=254,
        pattern=r"^[!-?A-~]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$",
    )
    negative_ttl: Ttl = 60
    glue: dict[DnsName, list[IP]] = Field(default_factory=dict)

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
    def _glue(cls, value: dict[str, list[IP]]) -> dict[str, list[IP]]:
        """Names spelled as everywhere; which hosts need glue is a zone rule
        (domain/validation.header_problems), checked before any write."""
        return {dns_name(k): v for k, v in value.items()}

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
    def from_domain(cls, z: Zone) -> ZoneOut:
        glue: dict[str, list[IP]] = {}
        for host, addr in z.glue:
            glue.setdefault(host, []).append(addr)
        return cls.model_construct(
            name=z.name,
            ns=list(z.ns),
            soa_email=z.soa_email,
            negative_ttl=z.negative_ttl,
            glue=glue,
        )
