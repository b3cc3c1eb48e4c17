"""compile_snapshot: the whole configuration and health, folded into lookup tables.

The DNS path reads only a Snapshot, never the store (DESIGN §1). Compiling does
every name computation once, so answering is a dictionary lookup plus routing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from app.domain import names
from app.domain.availability import available_endpoints
from app.domain.model import (
    Config,
    Endpoint,
    EndpointKind,
    Health,
    HealthState,
    IPAddress,
    MonitorProtocol,
    Profile,
    SrvService,
    Zone,
    effective_monitor,
)
from app.domain.records import NS_TTL, Record, soa_record


@dataclass(frozen=True, slots=True)
class ProfilePlan:
    """A profile ready to route: its endpoints, their states, and who is available."""

    zone: Zone
    profile: Profile
    fqdn: str
    states: Mapping[int, HealthState]
    available: tuple[Endpoint, ...]

    def own_name(self, endpoint: Endpoint) -> str:
        """The in-zone name of an address endpoint, used as its SRV target."""
        return f"{endpoint.name}.{self.fqdn}"


@dataclass(frozen=True, slots=True)
class Node:
    """Everything owned by one name in a zone."""

    zone: Zone
    profile: ProfilePlan | None = None  # A/AAAA routed by the profile's method
    srv: tuple[ProfilePlan, SrvService] | None = (
        None  # an SRV name the profile publishes
    )
    addresses: tuple[IPAddress, ...] = ()  # fixed A/AAAA: endpoint names and glue
    ttl: int = 60  # of `addresses`


@dataclass(frozen=True, slots=True)
class Snapshot:
    generation: int
    compiled_at: float
    config: Config = field(default_factory=Config)
    zones: Mapping[str, Zone] = field(default_factory=dict)
    nodes: Mapping[str, Node] = field(default_factory=dict)
    soas: Mapping[str, Record] = field(default_factory=dict)
    empty_non_terminals: frozenset[str] = frozenset()

    def zone_of(self, qname: str) -> Zone | None:
        """The zone holding `qname`: the longest zone apex that is a label suffix."""
        name = qname
        while True:
            zone = self.zones.get(name)
            if zone is not None:
                return zone
            if name == ".":
                return None
            name = name.split(".", 1)[1] or "."


def endpoint_state(
    profile: Profile, endpoint: Endpoint, health: Mapping[int, Health]
) -> HealthState:
    """The state routing sees: disabled and unmonitored come from configuration."""
    if not profile.enabled or not endpoint.enabled:
        return HealthState.DISABLED
    if effective_monitor(profile, endpoint).protocol is MonitorProtocol.NONE:
        return HealthState.UNMONITORED
    known = health.get(endpoint.id)
    return known.state if known is not None else HealthState.CHECKING


def compile_snapshot(
    config: Config, health: Mapping[int, Health], generation: int, now: float
) -> Snapshot:
    """Fold configuration and health into a Snapshot valid until the next change."""
    zones: dict[str, Zone] = {}
    nodes: dict[str, Node] = {}
    soas: dict[str, Record] = {}
    for zone in config.zones:
        zones[zone.name] = zone
        soas[zone.name] = soa_record(zone, generation)
        nodes.update(_zone_nodes(zone, health, now))
    return Snapshot(
        generation, now, config, zones, nodes, soas, _empty_non_terminals(nodes)
    )


def _zone_nodes(
    zone: Zone, health: Mapping[int, Health], now: float
) -> dict[str, Node]:
    nodes: dict[str, Node] = {zone.name: Node(zone)}
    glue: dict[str, list[IPAddress]] = {}
    for host, address in zone.glue:
        glue.setdefault(host, []).append(address)
    for host, addresses in glue.items():
        if host.endswith("." + zone.name):  # glue is only for in-zone servers
            nodes[host] = Node(zone, addresses=tuple(addresses), ttl=NS_TTL)
    for profile in zone.profiles:
        if not profile.enabled:
            continue
        plan = _plan(zone, profile, health, now)
        nodes[plan.fqdn] = Node(zone, profile=plan)
        for service in profile.srv:
            nodes[f"{service.service}.{plan.fqdn}"] = Node(zone, srv=(plan, service))
        for endpoint in profile.endpoints:
            if endpoint.kind is EndpointKind.ADDRESS and endpoint.address is not None:
                nodes[plan.own_name(endpoint)] = Node(
                    zone, addresses=(endpoint.address,), ttl=profile.ttl
                )
    return nodes


def _empty_non_terminals(nodes: Mapping[str, Node]) -> frozenset[str]:
    """Names with no records but with names below them (RFC 8020: NODATA, not
    NXDOMAIN), e.g. `_udp.sip.tm.example.` under `_sip._udp.sip.tm.example.`."""
    found: set[str] = set()
    for name, node in nodes.items():
        if name == node.zone.name:
            continue
        parent = name.split(".", 1)[1]
        while parent != node.zone.name and parent not in nodes and parent not in found:
            found.add(parent)
            parent = parent.split(".", 1)[1]
    return frozenset(found)


def _plan(
    zone: Zone, profile: Profile, health: Mapping[int, Health], now: float
) -> ProfilePlan:
    states = {e.id: endpoint_state(profile, e, health) for e in profile.endpoints}
    return ProfilePlan(
        zone=zone,
        profile=profile,
        fqdn=names.join(profile.name, zone.name),
        states=states,
        available=available_endpoints(profile.endpoints, states, now),
    )
