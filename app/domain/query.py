"""What a query asks and what routing decided. No I/O."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import NamedTuple

from app.domain.model import Endpoint, IPAddress


class RType(IntEnum):
    """The record types tmdns answers with (IANA numbers)."""

    A = 1
    NS = 2
    CNAME = 5
    SOA = 6
    PTR = 12
    HINFO = 13
    MX = 15
    TXT = 16
    AAAA = 28
    SRV = 33
    NAPTR = 35
    DS = 43
    ANY = 255
    CAA = 257


class Rcode(IntEnum):
    NOERROR = 0
    FORMERR = 1
    SERVFAIL = 2
    NXDOMAIN = 3
    NOTIMP = 4
    REFUSED = 5


@dataclass(frozen=True, slots=True)
class GeoFacts:
    """What a GeoIP database knows about a client network."""

    continent: str | None = None  # MaxMind continent code: "EU"
    country: str | None = None  # ISO 3166-1: "DE"
    subdivision: str | None = None  # ISO 3166-2: "DE-BY"
    latitude: float | None = None
    longitude: float | None = None
    prefix: int = 0  # length of the GeoIP network the client is in

    @property
    def place(self) -> tuple[str | None, str | None, str | None]:
        """What a place-decided answer depends on (app.domain.routing.ClientUse)."""
        return self.continent, self.country, self.subdivision


def _nowhere(_client: IPAddress) -> GeoFacts | None:
    return None


# None only when there is no database at all; an address the database does not
# know gets GeoFacts with just the length of the empty network around it, so
# that the ECS scope of an answer decided without a location stays exact.
Locate = Callable[[IPAddress], GeoFacts | None]


class QueryContext(NamedTuple):
    """Facts about the asker that client-dependent methods decide on.

    `locate` is looked up only by the methods that need it (geographic and
    performance), so other answers never pay for a GeoIP lookup. One per
    query: a named tuple, which is immutable and builds several times faster
    than a frozen dataclass.
    """

    client: IPAddress | None = None
    client_prefix: int = 0  # bits of `client` that are known (ECS source prefix)
    now: float = 0.0
    locate: Locate = _nowhere

    def geo(self) -> GeoFacts | None:
        return self.locate(self.client) if self.client is not None else None


class Decision(NamedTuple):
    """A routing method's selection, with the reason in words (for explain).
    One or more per query, hence a named tuple."""

    endpoints: tuple[Endpoint, ...]
    why: str
    scope: int = 0  # ECS scope prefix that decided this (0: client-independent)

    @classmethod
    def pick(cls, endpoints: Sequence[Endpoint], why: str) -> Decision:
        return cls(tuple(endpoints), why)

    @classmethod
    def nodata(cls, why: str) -> Decision:
        return cls((), why)
