"""Static rrsets as the API takes and gives them, PowerDNS-style:
`{"ttl": 60, "records": ["<rdata in presentation format>", …]}`.

Each record is parsed once, here, by dnspython (names in the data relative
to the zone, as in a zone file), and kept both as its canonical text and in
wire form, uncompressed: DNS only copies the octets, it never parses again.
"""

from __future__ import annotations

import dns.exception
import dns.name
import dns.rdata
import dns.rdataclass
import dns.rdatatype
from pydantic import BaseModel, Field

from app.domain import names
from app.domain.model import StaticData, StaticRRset
from app.domain.query import RType
from app.domain.static_rules import STATIC_TYPES
from app.domain.validation import Invalid, Problem
from app.schemas.common import Strict

MAX_TTL = 604_800  # a week: longer only makes a mistake last
MAX_RECORDS = 100


class RRsetIn(Strict):
    ttl: int = Field(default=60, ge=0, le=MAX_TTL)
    records: list[str] = Field(min_length=1, max_length=MAX_RECORDS)

    def to_domain(self, name: str, rtype: int, zone: str) -> StaticRRset:
        """The rrset at `name` (absolute) of `rtype`; each record parsed, a
        bad one refused naming it (`records.2: …`)."""
        origin = dns.name.from_text(zone)
        parsed: list[StaticData] = []
        problems: list[Problem] = []
        seen: dict[bytes, int] = {}
        for i, text in enumerate(self.records):
            try:
                kind = dns.rdatatype.RdataType(rtype)
                rdata = dns.rdata.from_text(
                    dns.rdataclass.IN, kind, text, origin=origin, relativize=False
                )
                wire = rdata.to_wire() or b""
            except (dns.exception.DNSException, ValueError) as exc:
                problems.append(Problem(f"records.{i}", _why(text, rtype, exc)))
                continue
            if wire in seen:
                problems.append(
                    Problem(f"records.{i}", f"repeats records.{seen[wire]}")
                )
                continue
            seen[wire] = i
            parsed.append(StaticData(rdata.to_text(), wire))
        if problems:
            raise Invalid(problems)
        return StaticRRset(name, rtype, self.ttl, tuple(parsed))


class RRsetOut(BaseModel):
    name: str = Field(description="relative to the zone; @ is the apex")
    type: str = Field(examples=["TXT"])
    ttl: int
    records: list[str] = Field(description="each in presentation format")

    @classmethod
    def from_domain(cls, rrset: StaticRRset, zone: str) -> RRsetOut:
        return cls(
            name=names.relative(rrset.name, zone),
            type=RType(rrset.rtype).name,
            ttl=rrset.ttl,
            records=[r.text for r in rrset.records],
        )


def static_type(text: str) -> int:
    """A type a static rrset may have, by its name in any case."""
    try:
        rtype = RType[text.strip().upper()]
    except KeyError:
        rtype = None
    if rtype not in STATIC_TYPES:
        allowed = ", ".join(sorted(RType(t).name for t in STATIC_TYPES))
        raise Invalid.one("type", f"{text!r} is not one of {allowed}")
    return int(rtype)


def _why(text: str, rtype: int, exc: Exception) -> str:
    kind = RType(rtype).name
    return f"{text!r} is not {kind} data: {exc or type(exc).__name__}"
