"""Helpers shared by the routing tests: candidates as a snapshot would build
them, and a GeoIP stand-in that maps client networks to GeoFacts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from ipaddress import ip_address, ip_network

from app.domain.availability import available_endpoints, held_back
from app.domain.latency import LatencyTable
from app.domain.model import Endpoint, HealthState, IPAddress, Profile
from app.domain.query import GeoFacts, Locate, QueryContext
from app.domain.ranges import parse_range
from app.domain.routing import Candidates

ONLINE = HealthState.ONLINE
OFFLINE = HealthState.OFFLINE

# Cities, for performance and geographic tests: (latitude, longitude).
PARIS = (48.8566, 2.3522)
LONDON = (51.5074, -0.1278)
DUBLIN = (53.35, -6.26)
VIRGINIA = (39.0, -77.5)
TOKYO = (35.68, 139.69)
SAN_FRANCISCO = (37.77, -122.42)


def candidates(
    profile: Profile,
    states: Mapping[int, HealthState] | None = None,
    *,
    now: float = 0.0,
    parked: int | None = None,
    latency: LatencyTable | None = None,
) -> Candidates:
    """What a snapshot hands a router: `available` from health and overrides,
    `usable` = enabled and not held back, ranges parsed from the subnets.
    Endpoints absent from `states` are online."""
    known = states or {}
    full = {e.id: known.get(e.id, ONLINE) for e in profile.endpoints}
    return Candidates(
        profile,
        available_endpoints(profile.endpoints, full, now),
        tuple(e for e in profile.endpoints if e.enabled and not held_back(e, now)),
        parked,
        {e.id: tuple(parse_range(r) for r in e.subnets) for e in profile.endpoints},
        latency or LatencyTable(),
    )


def locator(table: Mapping[str, GeoFacts]) -> Locate:
    """A GeoIP stand-in: the facts of the first listed network holding the
    client, with `prefix` set to that network's length unless given."""
    networks = [(ip_network(net), facts) for net, facts in table.items()]

    def locate(client: IPAddress) -> GeoFacts | None:
        for network, facts in networks:
            if client.version == network.version and client in network:
                return (
                    facts if facts.prefix else replace(facts, prefix=network.prefixlen)
                )
        return None

    return locate


def ctx_for(
    client: str | None,
    locate: Locate | None = None,
    *,
    prefix: int | None = None,
    now: float = 0.0,
) -> QueryContext:
    """A query from `client` (its full length known unless `prefix` is given)."""
    address = ip_address(client) if client is not None else None
    bits = prefix if prefix is not None else (address.max_prefixlen if address else 0)
    if locate is None:
        return QueryContext(address, bits, now)
    return QueryContext(address, bits, now, locate)


def names_of(endpoints: Iterable[Endpoint]) -> list[str]:
    return [e.name for e in endpoints]
