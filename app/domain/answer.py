"""answer(): the one resolution path, shared by the DNS server and explain.

Given a snapshot and a question, decide the rcode and records and say why. The
wire layer only encodes the result, so what DNS answers and what explain
reports cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from app.domain.availability import override_in_force
from app.domain.model import AllDown, Endpoint, EndpointKind, OverrideState
from app.domain.query import Decision, QueryContext, Rcode, RType
from app.domain.records import NS_TTL, Record, address_record, negative_soa
from app.domain.routing import route
from app.domain.snapshot import Node, ProfilePlan, Snapshot

ADDRESS_FAMILY: dict[int, int] = {RType.A: 4, RType.AAAA: 6}


@dataclass(frozen=True, slots=True)
class Answer:
    rcode: Rcode
    answer: tuple[Record, ...] = ()
    authority: tuple[Record, ...] = ()
    additional: tuple[Record, ...] = ()
    authoritative: bool = True
    scope: int = 0
    trace: tuple[str, ...] = ()


def answer(
    snapshot: Snapshot, qname: str, qtype: int, ctx: QueryContext, rng: Random
) -> Answer:
    """Resolve one question (qname lowercase and absolute) against `snapshot`."""
    zone = snapshot.zone_of(qname)
    if zone is None:
        return Answer(Rcode.REFUSED, authoritative=False, trace=("not in any zone",))
    soa = snapshot.soas[zone.name]
    node = snapshot.nodes.get(qname)
    if node is None:
        return Answer(
            Rcode.NXDOMAIN,
            authority=(negative_soa(soa),),
            trace=(f"zone {zone.name}", "no such name"),
        )
    trace = [f"zone {zone.name}"]
    records, scope = _records_at(snapshot, node, qname, qtype, ctx, rng, trace)
    if not records:
        trace.append("no records of this type: NODATA")
        return Answer(Rcode.NOERROR, authority=(negative_soa(soa),), trace=tuple(trace))
    return Answer(Rcode.NOERROR, answer=tuple(records), scope=scope, trace=tuple(trace))


def _records_at(
    snapshot: Snapshot,
    node: Node,
    qname: str,
    qtype: int,
    ctx: QueryContext,
    rng: Random,
    trace: list[str],
) -> tuple[list[Record], int]:
    zone = node.zone
    if qname == zone.name and qtype == RType.SOA:
        return [snapshot.soas[zone.name]], 0
    if qname == zone.name and qtype == RType.NS:
        return [Record(qname, RType.NS, NS_TTL, ns) for ns in zone.ns], 0
    family = ADDRESS_FAMILY.get(qtype)
    if family is None:
        return [], 0
    if node.endpoint is not None:
        address = node.endpoint.address
        trace.append(f"endpoint name {qname} (not routed)")
        if address is not None and address.version == family:
            return [address_record(qname, address, node.ttl)], 0
        return [], 0
    if node.profile is not None:
        decision = decide(node.profile, family, ctx, rng, trace)
        return _profile_records(node.profile, qname, decision), decision.scope
    return [], 0


def decide(
    plan: ProfilePlan, family: int, ctx: QueryContext, rng: Random, trace: list[str]
) -> Decision:
    """Route among the endpoints that can answer this address family.

    Availability is judged per family: when every IPv6 endpoint is down, the
    all_down policy applies to AAAA queries even if IPv4 endpoints are up.
    """
    profile = plan.profile
    trace.append(f"profile {plan.fqdn} method {profile.method}")
    for e in profile.endpoints:
        usable = e in plan.available
        trace.append(
            f"endpoint {e.name}: {plan.states[e.id]}" + ("" if usable else ", skipped")
        )
    candidates = [e for e in plan.available if _answers_family(e, family)]
    if not candidates:
        return _all_down(plan, family, ctx, rng, trace)
    decision = route(profile, candidates, ctx, rng)
    trace.append(decision.why)
    return decision


def _all_down(
    plan: ProfilePlan, family: int, ctx: QueryContext, rng: Random, trace: list[str]
) -> Decision:
    profile = plan.profile
    trace.append(f"nothing available for IPv{family}: all_down={profile.all_down}")
    if profile.all_down is AllDown.SERVE_ALL:
        # Azure and Route 53 fail open: every enabled endpoint counts as available.
        # An operator's force-down or drain still holds.
        everyone = [
            e
            for e in profile.endpoints
            if e.enabled
            and _answers_family(e, family)
            and override_in_force(e, ctx.now)
            not in (OverrideState.DOWN, OverrideState.DRAIN)
        ]
        decision = route(profile, everyone, ctx, rng)
        trace.append(decision.why)
        return decision
    fallback_address = profile.fallback
    if (
        profile.all_down is AllDown.FALLBACK
        and fallback_address is not None
        and fallback_address.version == family
    ):
        fallback = Endpoint(name="fallback", address=fallback_address)
        return Decision.pick([fallback], f"fallback address {fallback_address}")
    return Decision.nodata("no endpoint answers")


def _answers_family(endpoint: Endpoint, family: int) -> bool:
    if endpoint.kind is EndpointKind.HOST:
        return True
    return endpoint.address is not None and endpoint.address.version == family


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
