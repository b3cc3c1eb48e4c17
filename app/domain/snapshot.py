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
    MonitorProtocol,
    Profile,
    Zone,
    effective_monitor,
)
from app.domain.records import Record, soa_record


@dataclass(frozen=True, slots=True)
class ProfilePlan:
    """A profile ready to route: its endpoints, their states, and who is available."""

    zone: Zone
    profile: Profile
    fqdn: str
    states: Mapping[int, HealthState]
    available: tuple[Endpoint, ...]


@dataclass(frozen=True, slots=True)
class Node:
    """Everything owned by one name in a zone."""

    zone: Zone
    profile: ProfilePlan | None = None
    endpoint: Endpoint | None = None  # the endpoint's own name `<endpoint>.<profile>`
    ttl: int = 60  # of the endpoint's own name: its profile's TTL


@dataclass(frozen=True, slots=True)
class Snapshot:
    generation: int
    compiled_at: float
    config: Config = field(default_factory=Config)
    zones: Mapping[str, Zone] = field(default_factory=dict)
    nodes: Mapping[str, Node] = field(default_factory=dict)
    soas: Mapping[str, Record] = field(default_factory=dict)

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
        nodes[zone.name] = Node(zone)
        for profile in zone.profiles:
            if not profile.enabled:
                continue
            plan = _plan(zone, profile, health, now)
            nodes[plan.fqdn] = Node(zone, profile=plan)
            for endpoint in profile.endpoints:
                if endpoint.kind is EndpointKind.ADDRESS:
                    own = f"{endpoint.name}.{plan.fqdn}"
                    nodes[own] = Node(zone, endpoint=endpoint, ttl=profile.ttl)
    return Snapshot(generation, now, config, zones, nodes, soas)


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
