"""What a query asks and what routing decided. No I/O."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum

from app.domain.model import Endpoint, IPAddress


class RType(IntEnum):
    """The record types tmdns answers with (IANA numbers)."""

    A = 1
    NS = 2
    CNAME = 5
    SOA = 6
    HINFO = 13
    AAAA = 28
    SRV = 33
    ANY = 255


class Rcode(IntEnum):
    NOERROR = 0
    FORMERR = 1
    SERVFAIL = 2
    NXDOMAIN = 3
    NOTIMP = 4
    REFUSED = 5


@dataclass(frozen=True, slots=True)
class QueryContext:
    """Facts about the asker that client-dependent methods decide on."""

    client: IPAddress | None = None
    client_prefix: int = 0  # bits of `client` that are known (ECS source prefix)
    now: float = 0.0


@dataclass(frozen=True, slots=True)
class Decision:
    """A routing method's selection, with the reason in words (for explain)."""

    endpoints: tuple[Endpoint, ...]
    why: str
    scope: int = 0  # ECS scope prefix that decided this (0: client-independent)

    @classmethod
    def pick(cls, endpoints: Sequence[Endpoint], why: str) -> Decision:
        return cls(tuple(endpoints), why)

    @classmethod
    def nodata(cls, why: str) -> Decision:
        return cls((), why)
