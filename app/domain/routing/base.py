"""What every routing method receives, and the shape of a method."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum

from app.domain.draw import Draw
from app.domain.latency import LatencyTable
from app.domain.model import Endpoint, Method, Profile
from app.domain.query import Decision, QueryContext
from app.domain.ranges import AddressRange


@dataclass(frozen=True, slots=True)
class Candidates:
    """The endpoints a method may choose from for one query.

    `available` can answer the asked type and is healthy enough; `usable` can
    answer it and is enabled and not held back by an operator, whatever its
    health (geographic serves its match regardless of health, like Azure).
    """

    profile: Profile
    available: tuple[Endpoint, ...]
    usable: tuple[Endpoint, ...]
    parked: int | None = None  # priority/parking: the endpoint in use
    ranges: Mapping[int, tuple[AddressRange, ...]] = field(default_factory=dict)
    latency: LatencyTable = field(default_factory=LatencyTable)
    # Derived once: a plan keeps its candidates for every query it answers.
    available_ids: frozenset[int] = field(init=False)
    geo_owners: Mapping[str, Endpoint] = field(init=False)  # usable, by geo code

    def __post_init__(self) -> None:
        ids = frozenset(e.id for e in self.available)
        owners = {code: e for e in self.usable for code in e.geo}
        object.__setattr__(self, "available_ids", ids)  # frozen: set once here
        object.__setattr__(self, "geo_owners", owners)


Router = Callable[[Candidates, QueryContext, Draw], Decision]

SHARED_PRIORITY = 10  # SRV for weighted and multivalue: every target at one priority


@dataclass(frozen=True, slots=True)
class SrvChoice:
    """One SRV record to publish: its target endpoint, priority and weight."""

    endpoint: Endpoint
    priority: int
    weight: int


SrvChoices = tuple[list[SrvChoice], int]  # the records, and the ECS scope deciding them
# How a method maps onto SRV (DESIGN §3 table). RFC 2782: clients try the
# lowest priority first and spread load within one priority by weight.
SrvRule = Callable[[Candidates, QueryContext, Draw], SrvChoices]


class ClientUse(Enum):
    """What of the client a method's answer depends on."""

    NOTHING = "nothing"  # the same answer for every client
    # Only the GeoIP place (continent, country, subdivision): every client of
    # one place gets the same answers, each holding for its GeoIP network.
    PLACE = "place"
    ADDRESS = "address"  # the address itself (ranges, latency table, spread)


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """Everything that differs between routing methods, in one place: each
    routing/<method>.py has one, and routing.METHODS holds them all."""

    method: Method
    select: Router  # the A/AAAA decision
    srv: SrvRule  # the SRV records
    # What of the asker the answer depends on: the fast path stores replies
    # per client block unless NOTHING, and for PLACE shares them between
    # blocks of one place (app.dns.prefixcache).
    client_use: ClientUse
    azure_name: str  # trafficRoutingMethod in an Azure Traffic Manager profile

    @property
    def client_dependent(self) -> bool:
        return self.client_use is not ClientUse.NOTHING


def matched_only(select: Router) -> SrvRule:
    """SRV for methods that map a client to endpoints (geographic, subnet):
    the endpoints it is mapped to, alone, at priority 1."""

    def rule(c: Candidates, ctx: QueryContext, draw: Draw) -> SrvChoices:
        decision = select(c, ctx, draw)
        return [SrvChoice(e, 1, e.weight) for e in decision.endpoints], decision.scope

    return rule
