"""compile_snapshot: the whole configuration and health, folded into lookup tables.

The DNS path reads only a Snapshot, never the store (DESIGN §1). Compiling does
every name computation once, so answering is a dictionary lookup plus routing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from app.domain import names
from app.domain.availability import available_endpoints, held_back
from app.domain.changes import header
from app.domain.health import STALE_INTERVALS, is_stale
from app.domain.latency import LatencyEntry, LatencyTable
from app.domain.model import (
    Config,
    Endpoint,
    EndpointKind,
    Health,
    HealthState,
    IPAddress,
    MonitorProtocol,
    OnStale,
    Profile,
    Quarantined,
    SrvService,
    Zone,
    effective_monitor,
)
from app.domain.query import RType
from app.domain.ranges import AddressRange, parse_range
from app.domain.records import NS_TTL, Record, soa_record
from app.domain.routing.base import Candidates

MAX_NESTING = 10


@dataclass(frozen=True, slots=True)
class ProfilePlan:
    """A profile ready to route: its endpoints, their states, and who is available."""

    zone: Zone
    profile: Profile
    fqdn: str
    states: Mapping[int, HealthState]
    available: tuple[Endpoint, ...]
    usable: tuple[Endpoint, ...]  # enabled and not held back, whatever their health
    parked: int | None = None
    ranges: Mapping[int, tuple[AddressRange, ...]] = field(default_factory=dict)
    children: Mapping[int, ProfilePlan] = field(default_factory=dict)  # nested
    latency: LatencyTable = field(default_factory=LatencyTable)
    health: Mapping[int, Health] = field(default_factory=dict)
    # Degraded: an enabled endpoint is unavailable, here or in a nested
    # profile; the answers then carry the profile's degraded TTL.
    degraded: bool = False
    # The prober is stale and the profile says on_stale=serve_all: every
    # usable endpoint counts as available.
    stale: bool = False
    ttl: int = 60
    # Per address family (0: SRV targets; a service's name: the SRV targets
    # of a service some endpoints serve), who the method may choose from (None:
    # NODATA): worked out by the first such query, not by every one.
    by_family: dict[int | str, Candidates | None] = field(
        default_factory=dict, compare=False, repr=False
    )
    # SRV records (and their targets' addresses) by the choice that made them,
    # built once for the plan's life (app.domain.answer).
    srv_records: dict[tuple[object, ...], tuple[Record, Record | None]] = field(
        default_factory=dict, compare=False, repr=False
    )
    # A/AAAA records of the profile's answers, by (name asked, endpoint id,
    # address): the same for as long as the plan lives.
    address_records: dict[tuple[str, int, IPAddress], Record] = field(
        default_factory=dict, compare=False, repr=False
    )

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
    # Static rrsets (the zone's `rrsets`) by type; never beside the above.
    static: Mapping[int, tuple[Record, ...]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Snapshot:
    generation: int
    compiled_at: float
    config: Config = field(default_factory=Config)
    zones: Mapping[str, Zone] = field(default_factory=dict)
    nodes: Mapping[str, Node] = field(default_factory=dict)
    soas: Mapping[str, Record] = field(default_factory=dict)
    empty_non_terminals: frozenset[str] = frozenset()
    expires_at: float | None = None  # the next operator override expiry
    # The prober's verdicts as of each endpoint's last state change.
    health: Mapping[int, Health] = field(default_factory=dict)
    plans: Mapping[int, ProfilePlan] = field(default_factory=dict)  # by profile id
    latency_table: LatencyTable = field(default_factory=LatencyTable)
    # Each profile's nodes by profile id: a refresh keeps those it did not touch.
    fragments: Mapping[int, Mapping[str, Node]] = field(default_factory=dict)
    # Profiles that failed to load or compile, by id (domain/quarantine.py).
    quarantined: Mapping[int, Quarantined] = field(default_factory=dict)
    # The prober's heartbeat this was compiled with; while a profile serves all
    # for a stale prober, a newer heartbeat calls for a new snapshot.
    prober_seen_at: float | None = None
    stale_serving: bool = False
    # Delegation points (a static NS rrset below a zone's apex): at and below
    # them tmdns refers, it does not answer.
    cuts: frozenset[str] = frozenset()
    static_names: frozenset[str] = frozenset()  # every static rrset's name

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
    if endpoint.always_serve:
        return HealthState.ALWAYS_SERVE  # not probed: nothing to be offline about
    if effective_monitor(profile, endpoint).protocol is MonitorProtocol.NONE:
        return HealthState.UNMONITORED
    known = health.get(endpoint.id)
    return known.state if known is not None else HealthState.CHECKING


def compile_latency(config: Config) -> LatencyTable:
    return LatencyTable(
        tuple(LatencyEntry(parse_range(net), dict(rtt)) for net, rtt in config.latency)
    )


def compile_snapshot(
    config: Config,
    health: Mapping[int, Health],
    generation: int,
    now: float,
    reuse: Reuse | None = None,
    prober_seen_at: float | None = None,
) -> Snapshot:
    """Fold configuration and health into a Snapshot valid until the next change
    (or until `expires_at`, when an operator override runs out).

    With `reuse`, the previous snapshot's plans are kept for every profile that
    is the very same object, is not marked dirty and has no rebuilt child: a
    change to one profile costs one plan, not one per profile.
    """
    zones: dict[str, Zone] = {}
    nodes: dict[str, Node] = {}
    soas: dict[str, Record] = {}
    latency = reuse.previous.latency_table if reuse else compile_latency(config)
    planner = _Planner(config, health, now, latency, reuse, prober_seen_at)
    for zone in config.zones:
        own = planner.header(zone)
        zones[zone.name] = own
        soas[zone.name] = soa_record(own, generation)
        nodes.update(_zone_nodes(zone, own, planner))
    previous = reuse.previous if reuse else None
    static_names = frozenset(r.name for z in config.zones for r in z.rrsets)
    if (
        previous is not None
        and planner.same_names(previous)
        and previous.static_names == static_names
    ):
        empty_non_terminals = previous.empty_non_terminals
    else:
        empty_non_terminals = _empty_non_terminals(nodes)
    expiries = [
        e.override.until
        for z in config.zones
        for p in z.profiles
        for e in p.endpoints
        if e.override is not None
        and e.override.until is not None
        and e.override.until > now
    ]
    # When a profile that serves all on a stale prober would turn stale.
    expiries += [
        prober_seen_at + STALE_INTERVALS * p.monitor.interval
        for z in config.zones
        for p in z.profiles
        if p.on_stale is OnStale.SERVE_ALL
        and prober_seen_at is not None
        and not is_stale(prober_seen_at, p.monitor, now)
    ]
    return Snapshot(
        generation,
        now,
        config,
        zones,
        nodes,
        soas,
        empty_non_terminals,
        min(expiries, default=None),
        health,
        planner.plans,
        latency,
        planner.fragments,
        {**config.broken, **planner.quarantined},
        prober_seen_at,
        any(plan.stale for plan in planner.plans.values()),
        frozenset(
            r.name
            for z in config.zones
            for r in z.rrsets
            if r.rtype == RType.NS and r.name != z.name
        ),
        static_names,
    )


@dataclass(frozen=True, slots=True)
class Reuse:
    """The snapshot being replaced, and the profiles whose plans must be rebuilt
    although their objects did not change (new health or parking)."""

    previous: Snapshot
    dirty: frozenset[int]


def _zone_nodes(zone: Zone, own: Zone, planner: _Planner) -> dict[str, Node]:
    """`own`: the zone's header (no profiles), which answers and nodes keep, so
    plans reused across snapshots never hold an old zone's profile list."""
    nodes: dict[str, Node] = {zone.name: Node(own)}
    glue: dict[str, list[IPAddress]] = {}
    for host, address in zone.glue:
        glue.setdefault(host, []).append(address)
    for host, addresses in glue.items():
        if host.endswith("." + zone.name):  # glue is only for in-zone servers
            nodes[host] = Node(own, addresses=tuple(addresses), ttl=NS_TTL)
    for profile in zone.profiles:
        if profile.enabled:
            nodes.update(planner.guarded_fragment(zone, own, profile))
    nodes.update(_static_nodes(zone, own, nodes.get(zone.name)))
    return nodes


def _static_nodes(zone: Zone, own: Zone, apex: Node | None) -> dict[str, Node]:
    """The names of the zone's static rrsets (validation keeps them off the
    names profiles own); apex ones join the apex's node."""
    by_name: dict[str, dict[int, tuple[Record, ...]]] = {}
    for rrset in zone.rrsets:
        records = tuple(
            Record(rrset.name, RType(rrset.rtype), rrset.ttl, data)
            for data in rrset.records
        )
        by_name.setdefault(rrset.name, {})[rrset.rtype] = records
    nodes: dict[str, Node] = {}
    for name, static in by_name.items():
        if name == zone.name and apex is not None:
            nodes[name] = replace(apex, static=static)
        else:
            nodes[name] = Node(own, static=static)
    return nodes


def _fragment(own: Zone, plan: ProfilePlan) -> dict[str, Node]:
    """The names one profile owns: its own, its SRV names, its endpoints'."""
    profile = plan.profile
    nodes = {plan.fqdn: Node(own, profile=plan)}
    for service in profile.srv:
        nodes[f"{service.service}.{plan.fqdn}"] = Node(own, srv=(plan, service))
    for endpoint in profile.endpoints:
        if endpoint.kind is EndpointKind.ADDRESS and endpoint.address is not None:
            nodes[plan.own_name(endpoint)] = Node(
                own, addresses=(endpoint.address,), ttl=profile.ttl
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


class _Planner:
    """Builds each profile's plan once; a nested endpoint's availability needs
    its child's plan first, so plans are built on demand and remembered."""

    def __init__(
        self,
        config: Config,
        health: Mapping[int, Health],
        now: float,
        latency: LatencyTable,
        reuse: Reuse | None,
        prober_seen_at: float | None = None,
    ) -> None:
        self._config, self._health, self._now = config, health, now
        self._seen = prober_seen_at
        self._latency = latency
        self._before = reuse.previous if reuse else None
        self._previous = reuse.previous.plans if reuse else {}
        self._dirty = reuse.dirty if reuse else frozenset()
        self._renamed = False  # a rebuilt profile now owns other names
        self.fragments: dict[int, Mapping[str, Node]] = {}
        self._done: dict[tuple[str, str], ProfilePlan] = {}
        self._by_name: dict[str, dict[str, Profile]] = {}
        self._headers: dict[str, Zone] = {}
        self.plans: dict[int, ProfilePlan] = {}
        self.quarantined: dict[int, Quarantined] = {}

    def guarded_fragment(
        self, zone: Zone, own: Zone, profile: Profile
    ) -> Mapping[str, Node]:
        """The profile's nodes; if it cannot be compiled, its last good nodes
        (or none), so one bad profile never stops a snapshot."""
        try:
            return self.fragment(zone, own, profile)
        except Exception as exc:
            old = self._before.fragments.get(profile.id) if self._before else None
            previous = self._previous.get(profile.id)
            if old is not None and previous is not None:
                self.plans[profile.id] = previous
                self.fragments[profile.id] = old
            else:
                self.plans.pop(profile.id, None)
                self._renamed = True
            self.quarantined[profile.id] = Quarantined(
                profile.id, zone.name, profile.name, _why(exc), old is not None
            )
            return old or {}

    def plan(self, zone: Zone, profile: Profile, depth: int = 0) -> ProfilePlan:
        key = (zone.name, profile.name)
        if key in self._done:
            return self._done[key]
        children = self._children(zone, profile, depth)
        old = self._previous.get(profile.id)
        if (
            old is not None
            and old.profile is profile
            and profile.id not in self._dirty
            and old.stale is self._stale(profile)
            and _same(old.children, children)
        ):
            plan = old
        else:
            plan = self._build(zone, profile, children)
        self._done[key] = self.plans[profile.id] = plan
        return plan

    def _stale(self, profile: Profile) -> bool:
        return profile.on_stale is OnStale.SERVE_ALL and is_stale(
            self._seen, profile.monitor, self._now
        )

    def _build(
        self, zone: Zone, profile: Profile, children: dict[int, ProfilePlan]
    ) -> ProfilePlan:
        states = {e.id: self._state(profile, e, children) for e in profile.endpoints}
        health = self._health
        # A nested endpoint whose child is not there (disabled or quarantined)
        # has nothing to answer with, whatever an override 'up' says.
        answerable = [
            e
            for e in profile.endpoints
            if e.kind is not EndpointKind.NESTED or e.id in children
        ]
        usable = tuple(
            e for e in answerable if e.enabled and not held_back(e, self._now)
        )
        stale = self._stale(profile)
        available = (
            usable if stale else available_endpoints(answerable, states, self._now)
        )
        up = {e.id for e in available}
        degraded = any(e.enabled and e.id not in up for e in profile.endpoints) or any(
            child.degraded for child in children.values()
        )
        return ProfilePlan(
            zone=self.header(zone),
            profile=profile,
            fqdn=names.join(profile.name, zone.name),
            states=states,
            available=available,
            usable=usable,
            parked=self._config.parked.get(profile.id),
            ranges={
                e.id: tuple(parse_range(r) for r in e.subnets)
                for e in profile.endpoints
            },
            children=children,
            latency=self._latency,
            health={e.id: health[e.id] for e in profile.endpoints if e.id in health},
            degraded=degraded,
            stale=stale,
            ttl=profile.degraded_ttl if degraded else profile.ttl,
        )

    def header(self, zone: Zone) -> Zone:
        """One header object per zone, the previous snapshot's when unchanged,
        so its nodes can be kept as they are."""
        own = self._headers.get(zone.name)
        if own is None:
            own = header(zone)
            old = self._before.zones.get(zone.name) if self._before else None
            self._headers[zone.name] = own = old if old == own else own
        return own

    def fragment(self, zone: Zone, own: Zone, profile: Profile) -> Mapping[str, Node]:
        """The profile's nodes: the previous ones while its plan and zone stand."""
        plan = self.plan(zone, profile)
        old = self._before.fragments.get(profile.id) if self._before else None
        kept = old.get(plan.fqdn) if old is not None else None
        nodes: Mapping[str, Node]
        if old is not None and kept is not None and kept.profile is plan:
            nodes = old if kept.zone is own else _fragment(own, plan)
        else:
            nodes = _fragment(own, plan)
            if old is None or nodes.keys() != old.keys():
                self._renamed = True
        self.fragments[profile.id] = nodes
        return nodes

    def same_names(self, previous: Snapshot) -> bool:
        """Every profile owns the names it owned before, and no more profiles."""
        return not self._renamed and len(self.fragments) == len(previous.fragments)

    def _children(
        self, zone: Zone, profile: Profile, depth: int
    ) -> dict[int, ProfilePlan]:
        nested = [e for e in profile.endpoints if e.kind is EndpointKind.NESTED]
        if not nested or depth >= MAX_NESTING:
            return {}  # validation refuses deeper nesting; never recurse without end
        if zone.name not in self._by_name:
            self._by_name[zone.name] = {p.name: p for p in zone.profiles if p.enabled}
        by_name = self._by_name[zone.name]
        children: dict[int, ProfilePlan] = {}
        for e in nested:
            if e.child not in by_name:
                continue
            try:
                children[e.id] = self.plan(zone, by_name[e.child], depth + 1)
            except Exception:  # the child is quarantined when its turn comes
                continue
        return children

    def _state(
        self, profile: Profile, endpoint: Endpoint, children: Mapping[int, ProfilePlan]
    ) -> HealthState:
        """A nested endpoint is online while its child has at least
        min_child_endpoints available, and of them at least
        min_child_endpoints_ipv4 / _ipv6 that answer A / AAAA (Azure's
        MinChildEndpoints, MinChildEndpointsIPv4 and MinChildEndpointsIPv6)."""
        if endpoint.kind is not EndpointKind.NESTED:
            return endpoint_state(profile, endpoint, self._health)
        child = children.get(endpoint.id)
        if not profile.enabled or not endpoint.enabled or child is None:
            return HealthState.DISABLED
        up = child.available
        enough = (
            len(up) >= endpoint.min_child_endpoints
            and answering(up, 4) >= endpoint.min_child_endpoints_ipv4
            and answering(up, 6) >= endpoint.min_child_endpoints_ipv6
        )
        return HealthState.ONLINE if enough else HealthState.OFFLINE


def answering(endpoints: tuple[Endpoint, ...], family: int) -> int:
    """How many can answer this address family: address endpoints of its
    version; host (CNAME) and nested endpoints can answer either."""
    return sum(1 for e in endpoints if e.address is None or e.address.version == family)


def _same(old: Mapping[int, ProfilePlan], new: Mapping[int, ProfilePlan]) -> bool:
    """The very same child plans (identity: a rebuilt child means a rebuilt parent)."""
    return len(old) == len(new) and all(new.get(k) is v for k, v in old.items())


def _why(exc: Exception) -> str:
    return f"cannot be compiled: {str(exc) or type(exc).__name__}"
