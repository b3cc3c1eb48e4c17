"""answer(): the one resolution path, shared by the DNS server and explain.

Given a snapshot and a question, decide the rcode and records and say why. The
wire layer only encodes the result, so what DNS answers and what explain
reports cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from random import Random

from app.domain.availability import override_in_force
from app.domain.model import AllDown, Endpoint, EndpointKind, OverrideState, SrvService
from app.domain.query import Decision, QueryContext, Rcode, RType
from app.domain.records import (
    NS_TTL,
    Record,
    Srv,
    address_record,
    any_record,
    negative_soa,
)
from app.domain.routing import route
from app.domain.snapshot import Node, ProfilePlan, Snapshot
from app.domain.srv import SRV_RULES

ADDRESS_FAMILY: dict[int, int] = {RType.A: 4, RType.AAAA: 6}
_EndpointFilter = Callable[[Endpoint], bool]


@dataclass(frozen=True, slots=True)
class Answer:
    rcode: Rcode
    answer: tuple[Record, ...] = ()
    authority: tuple[Record, ...] = ()
    additional: tuple[Record, ...] = ()
    authoritative: bool = True
    scope: int = 0  # ECS scope prefix that decided the answer
    trace: tuple[str, ...] = ()


@dataclass(slots=True)
class _Found:
    answer: list[Record] = field(default_factory=list)
    additional: list[Record] = field(default_factory=list)
    scope: int = 0


def answer(
    snapshot: Snapshot, qname: str, qtype: int, ctx: QueryContext, rng: Random
) -> Answer:
    """Resolve one question (qname lowercase and absolute) against `snapshot`."""
    zone = snapshot.zone_of(qname)
    if zone is None:
        return Answer(Rcode.REFUSED, authoritative=False, trace=("not in any zone",))
    trace = [f"zone {zone.name}"]
    negative = (negative_soa(snapshot.soas[zone.name]),)
    node = snapshot.nodes.get(qname)
    if node is None:
        if qname in snapshot.empty_non_terminals:
            trace.append("empty non-terminal: NODATA (RFC 8020)")
            return Answer(Rcode.NOERROR, authority=negative, trace=tuple(trace))
        trace.append("no such name")
        return Answer(Rcode.NXDOMAIN, authority=negative, trace=tuple(trace))
    if qtype == RType.ANY:
        trace.append("ANY: minimal answer (RFC 8482)")
        return Answer(Rcode.NOERROR, answer=(any_record(qname),), trace=tuple(trace))
    found = _records_at(snapshot, node, qname, qtype, ctx, rng, trace)
    if not found.answer:
        trace.append("no records of this type: NODATA")
        return Answer(Rcode.NOERROR, authority=negative, trace=tuple(trace))
    return Answer(
        Rcode.NOERROR,
        answer=tuple(found.answer),
        additional=tuple(found.additional),
        scope=min(found.scope, ctx.client_prefix),
        trace=tuple(trace),
    )


def _records_at(
    snapshot: Snapshot,
    node: Node,
    qname: str,
    qtype: int,
    ctx: QueryContext,
    rng: Random,
    trace: list[str],
) -> _Found:
    zone = node.zone
    if qname == zone.name and qtype == RType.SOA:
        return _Found([snapshot.soas[zone.name]])
    if qname == zone.name and qtype == RType.NS:
        return _Found(
            [Record(qname, RType.NS, NS_TTL, ns) for ns in zone.ns],
            _glue_for(snapshot, zone.ns),
        )
    if node.srv is not None and qtype == RType.SRV:
        return _srv(*node.srv, ctx, rng, trace)
    family = ADDRESS_FAMILY.get(qtype)
    if node.profile is not None and family is None:
        return _cname_only(node.profile, qname, ctx, rng, trace)
    if family is None:
        return _Found()
    if node.addresses:
        trace.append(f"{qname}: fixed addresses (not routed)")
        return _Found(
            [
                address_record(qname, a, node.ttl)
                for a in node.addresses
                if a.version == family
            ]
        )
    if node.profile is not None:
        decision = decide(node.profile, family, ctx, rng, trace)
        return _Found(
            _profile_records(node.profile, qname, decision), scope=decision.scope
        )
    return _Found()


def _cname_only(
    plan: ProfilePlan, qname: str, ctx: QueryContext, rng: Random, trace: list[str]
) -> _Found:
    """Other types at a profile name: when the selection is a host endpoint the
    name is a CNAME, which answers every type (RFC 1034 §4.3.2); else NODATA."""
    decision = decide(plan, 4, ctx, rng, trace)
    records = _profile_records(plan, qname, decision)
    return _Found([r for r in records if r.rtype is RType.CNAME], scope=decision.scope)


def _glue_for(snapshot: Snapshot, hosts: Sequence[str]) -> list[Record]:
    """A/AAAA of in-zone name servers, so resolvers need no second lookup."""
    glue = []
    for host in hosts:
        node = snapshot.nodes.get(host)
        if node is not None:
            glue += [address_record(host, a, node.ttl) for a in node.addresses]
    return glue


def _trace_states(plan: ProfilePlan, trace: list[str]) -> None:
    trace.append(f"profile {plan.fqdn} method {plan.profile.method}")
    for e in plan.profile.endpoints:
        skipped = "" if e in plan.available else ", skipped"
        trace.append(f"endpoint {e.name}: {plan.states[e.id]}{skipped}")


def decide(
    plan: ProfilePlan, family: int, ctx: QueryContext, rng: Random, trace: list[str]
) -> Decision:
    """Route among the endpoints that can answer this address family.

    Availability is judged per family: when every IPv6 endpoint is down, the
    all_down policy applies to AAAA queries even if IPv4 endpoints are up.
    """
    profile = plan.profile
    _trace_states(plan, trace)
    candidates = [e for e in plan.available if _answers_family(e, family)]
    if not candidates:
        trace.append(f"nothing available for IPv{family}: all_down={profile.all_down}")
        candidates = _when_all_down(plan, ctx, lambda e: _answers_family(e, family))
        if not candidates:
            return _fallback(plan, family)
    decision = route(profile, candidates, ctx, rng)
    trace.append(decision.why)
    return decision


def _when_all_down(
    plan: ProfilePlan, ctx: QueryContext, wanted: _EndpointFilter
) -> list[Endpoint]:
    """serve_all (Azure and Route 53 fail open): every enabled endpoint counts as
    available, except those an operator forced down or is draining."""
    if plan.profile.all_down is not AllDown.SERVE_ALL:
        return []
    held_back = (OverrideState.DOWN, OverrideState.DRAIN)
    return [
        e
        for e in plan.profile.endpoints
        if e.enabled and wanted(e) and override_in_force(e, ctx.now) not in held_back
    ]


def _fallback(plan: ProfilePlan, family: int) -> Decision:
    address = plan.profile.fallback
    if (
        plan.profile.all_down is AllDown.FALLBACK
        and address is not None
        and address.version == family
    ):
        return Decision.pick(
            [Endpoint(name="fallback", address=address)], f"fallback {address}"
        )
    return Decision.nodata("no endpoint answers")


def _answers_family(endpoint: Endpoint, family: int) -> bool:
    if endpoint.kind is EndpointKind.HOST:
        return True
    return endpoint.address is not None and endpoint.address.version == family


def _is_srv_target(endpoint: Endpoint) -> bool:
    return endpoint.kind is EndpointKind.HOST or endpoint.address is not None


def _profile_records(plan: ProfilePlan, qname: str, decision: Decision) -> list[Record]:
    ttl = plan.profile.ttl
    hosts = [e for e in decision.endpoints if e.kind is EndpointKind.HOST]
    if hosts and hosts[0].target is not None:
        # A name holds a CNAME or other data, never both (RFC 1034 §3.6.2).
        return [Record(qname, RType.CNAME, ttl, hosts[0].target)]
    return [
        address_record(qname, e.address, ttl)
        for e in decision.endpoints
        if e.address is not None
    ]


def _srv(
    plan: ProfilePlan,
    service: SrvService,
    ctx: QueryContext,
    rng: Random,
    trace: list[str],
) -> _Found:
    """SRV targets are the endpoints' own in-zone names (never CNAMEs, RFC 2782),
    with their addresses in the additional section."""
    _trace_states(plan, trace)
    candidates = [e for e in plan.available if _is_srv_target(e)]
    if not candidates:
        trace.append(f"nothing available: all_down={plan.profile.all_down}")
        candidates = _when_all_down(plan, ctx, _is_srv_target)
    choices = SRV_RULES[plan.profile.method](candidates, ctx, rng)
    ttl = plan.profile.ttl
    found = _Found()
    owner = f"{service.service}.{plan.fqdn}"
    for choice in choices:
        e = choice.endpoint
        target = plan.own_name(e) if e.kind is EndpointKind.ADDRESS else e.target
        assert target is not None
        port = e.port or service.port
        srv = Srv(choice.priority, choice.weight, port, target)
        found.answer.append(Record(owner, RType.SRV, ttl, srv))
        if e.kind is EndpointKind.ADDRESS and e.address is not None:
            found.additional.append(address_record(target, e.address, ttl))
    trace.append(f"SRV: {len(choices)} target(s)")
    return found
