"""answer(): the one resolution path, shared by the DNS server and explain.

Given a snapshot and a question, decide the rcode and records and say why. The
wire layer only encodes the result, so what DNS answers and what explain
reports cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from app.domain.availability import override_in_force
from app.domain.draw import Draw
from app.domain.model import (
    AllDown,
    Endpoint,
    EndpointKind,
    OverrideState,
    SrvService,
    StaticData,
)
from app.domain.query import Decision, QueryContext, Rcode, RType
from app.domain.records import (
    NAPTR_SERVICES,
    NS_TTL,
    Naptr,
    Record,
    Srv,
    address_record,
    any_record,
    negative_soa,
)
from app.domain.routing import Candidates, SrvChoice, route, srv_choices
from app.domain.snapshot import Node, ProfilePlan, Snapshot, answering

ADDRESS_FAMILY: dict[int, int] = {RType.A: 4, RType.AAAA: 6}
SRV_TARGETS = 0  # the key of SRV targets among a plan's per-family sets
_EndpointFilter = Callable[[Endpoint], bool]


class Answer(NamedTuple):
    """What answer() decided for one question; one per query on the full path,
    hence a named tuple (immutable, and quick to build)."""

    rcode: Rcode
    answer: tuple[Record, ...] = ()
    authority: tuple[Record, ...] = ()
    additional: tuple[Record, ...] = ()
    authoritative: bool = True
    scope: int = 0  # ECS scope prefix that decided the answer
    trace: tuple[str, ...] = ()
    # The leading bits of the client address the answer depends on, whatever
    # ECS asked for and NODATA included: every client of client/holds_for with
    # the same client prefix gets this answer (what the DNS layer caches by).
    holds_for: int = 0


@dataclass(slots=True)
class _Found:
    answer: list[Record] = field(default_factory=list)
    additional: list[Record] = field(default_factory=list)
    scope: int = 0


def answer(
    snapshot: Snapshot,
    qname: str,
    qtype: int,
    ctx: QueryContext,
    draw: Draw,
    explain: bool = False,
) -> Answer:
    """Resolve one question (qname lowercase and absolute) against `snapshot`.

    With `explain`, the answer's trace says why, endpoint by endpoint; DNS
    leaves it empty, since writing it costs more than the decision."""
    zone = snapshot.zone_of(qname)
    if zone is None:
        why = ("not in any zone",) if explain else ()
        return Answer(Rcode.REFUSED, authoritative=False, trace=why)
    trace = [f"zone {zone.name}"] if explain else None
    if snapshot.cuts:
        cut = _cut_at_or_above(snapshot, qname, zone.name)
        if cut is not None and not (cut == qname and qtype == RType.DS):
            _note(trace, f"delegated at {cut}: a referral to its name servers")
            return _referral(snapshot, cut, trace)
    node = snapshot.nodes.get(qname)
    if node is None:
        negative = (negative_soa(snapshot.soas[zone.name]),)
        if qname in snapshot.empty_non_terminals:
            _note(trace, "empty non-terminal: NODATA (RFC 8020)")
            return Answer(Rcode.NOERROR, authority=negative, trace=_lines(trace))
        _note(trace, "no such name")
        return Answer(Rcode.NXDOMAIN, authority=negative, trace=_lines(trace))
    if qtype == RType.ANY:
        _note(trace, "ANY: minimal answer (RFC 8482)")
        return Answer(Rcode.NOERROR, answer=(any_record(qname),), trace=_lines(trace))
    found = _records_at(snapshot, node, qname, qtype, ctx, draw, trace)
    if not found.answer:
        _note(trace, "no records of this type: NODATA")
        negative = (negative_soa(snapshot.soas[zone.name]),)
        # A client-dependent NODATA (no subnet matched, say) carries its scope
        # too, or resolvers would keep it for every client (RFC 7871 §7.2.1).
        return Answer(
            Rcode.NOERROR,
            authority=negative,
            scope=min(found.scope, ctx.client_prefix),
            trace=_lines(trace),
            holds_for=found.scope,
        )
    return Answer(
        Rcode.NOERROR,
        answer=tuple(found.answer),
        additional=tuple(found.additional),
        scope=min(found.scope, ctx.client_prefix),
        trace=_lines(trace),
        holds_for=found.scope,
    )


def _records_at(
    snapshot: Snapshot,
    node: Node,
    qname: str,
    qtype: int,
    ctx: QueryContext,
    draw: Draw,
    trace: list[str] | None,
) -> _Found:
    zone = node.zone
    if qname == zone.name and qtype == RType.SOA:
        return _Found([snapshot.soas[zone.name]])
    if qname == zone.name and qtype == RType.NS:
        return _Found(
            [Record(qname, RType.NS, NS_TTL, ns) for ns in zone.ns],
            _glue_for(snapshot, zone.ns),
        )
    if node.static:
        return _static(node, qname, qtype, trace)
    if node.srv is not None and qtype == RType.SRV:
        return _srv(*node.srv, ctx, draw, trace)
    family = ADDRESS_FAMILY.get(qtype)
    if node.profile is not None and qtype == RType.NAPTR:
        return _naptr(node.profile, qname, trace)
    if node.profile is not None and family is None:
        return _cname_only(node.profile, qname, ctx, draw, trace)
    if family is None:
        return _Found()
    if node.addresses:
        _note(trace, f"{qname}: fixed addresses (not routed)")
        return _Found(
            [
                address_record(qname, a, node.ttl)
                for a in node.addresses
                if a.version == family
            ]
        )
    if node.profile is not None:
        decision = decide(node.profile, family, ctx, draw, trace)
        return _Found(
            _profile_records(node.profile, qname, decision), scope=decision.scope
        )
    return _Found()


def _naptr(plan: ProfilePlan, qname: str, trace: list[str] | None) -> _Found:
    """RFC 3263: a NAPTR per SIP service the profile names in `naptr`, each
    pointing to its SRV name; a service none of whose endpoints is available
    is left out, so a caller never tries a transport that is down. With none
    left, NODATA: RFC 3263 clients then ask the SRV names themselves, which
    answer as the profile's all_down says."""
    available = {e.name for e in plan.available}
    records = []
    for service in plan.profile.srv:
        if service.naptr is None:
            continue
        serving = set(service.endpoints) or {e.name for e in plan.profile.endpoints}
        if not serving & available:
            _note(trace, f"NAPTR {service.service}: no endpoint available, left out")
            continue
        order, preference = service.naptr
        data = Naptr(
            order,
            preference,
            NAPTR_SERVICES[service.service],
            f"{service.service}.{plan.fqdn}",
        )
        records.append(Record(qname, RType.NAPTR, plan.ttl, data))
    if records:
        _note(trace, f"NAPTR: {len(records)} service(s)")
    return _Found(records)


def _cname_only(
    plan: ProfilePlan,
    qname: str,
    ctx: QueryContext,
    draw: Draw,
    trace: list[str] | None,
) -> _Found:
    """Other types at a profile name: when the selection is a host endpoint the
    name is a CNAME, which answers every type (RFC 1034 §4.3.2); else NODATA."""
    decision = decide(plan, 4, ctx, draw, trace)
    records = _profile_records(plan, qname, decision)
    return _Found([r for r in records if r.rtype is RType.CNAME], scope=decision.scope)


def _static(node: Node, qname: str, qtype: int, trace: list[str] | None) -> _Found:
    """A static name: the rrset of the type asked, or its CNAME whatever the
    type (RFC 1034 §3.6.2: a CNAME has no other data beside it)."""
    cname = node.static.get(RType.CNAME)
    if cname is not None:
        _note(trace, f"{qname}: static CNAME")
        return _Found(list(cname))
    records = node.static.get(qtype, ())
    if records:
        _note(trace, f"{qname}: static records")
    return _Found(list(records))


def _text(record: Record) -> str:
    """A static record's data as written (an NS rrset's host name)."""
    data = record.rdata
    return data.text if isinstance(data, StaticData) else str(data)


def _cut_at_or_above(snapshot: Snapshot, qname: str, apex: str) -> str | None:
    """The delegation point `qname` is at or below, if any (names below the
    apex only: the zone's own NS are no delegation)."""
    name = qname
    while name != apex:
        if name in snapshot.cuts:
            return name
        name = name.split(".", 1)[1]
    return None


def _referral(snapshot: Snapshot, cut: str, trace: list[str] | None) -> Answer:
    """RFC 1034 §4.3.2: not authoritative, the child's NS in the authority
    section and their addresses (glue) where this zone has them."""
    ns = snapshot.nodes[cut].static[RType.NS]
    hosts = [_text(record).lower() for record in ns]
    return Answer(
        Rcode.NOERROR,
        authority=ns,
        additional=tuple(_glue_for(snapshot, hosts)),
        authoritative=False,
        trace=_lines(trace),
    )


def _glue_for(snapshot: Snapshot, hosts: Sequence[str]) -> list[Record]:
    """A/AAAA of in-zone name servers, so resolvers need no second lookup:
    the zone's glue, or static A/AAAA rrsets (a delegation's glue)."""
    glue: list[Record] = []
    for host in hosts:
        node = snapshot.nodes.get(host)
        if node is not None:
            glue += [address_record(host, a, node.ttl) for a in node.addresses]
            glue += [*node.static.get(RType.A, ()), *node.static.get(RType.AAAA, ())]
    return glue


def _trace_states(
    plan: ProfilePlan, ctx: QueryContext, answers: _EndpointFilter, trace: list[str]
) -> None:
    trace.append(f"profile {plan.fqdn} method {plan.profile.method}")
    if plan.stale:
        trace.append(
            "prober stale: every enabled endpoint counts as available "
            "(on_stale=serve_all)"
        )
    if plan.degraded:
        trace.append(
            f"degraded (an endpoint is unavailable): TTL {plan.ttl}, "
            f"not {plan.profile.ttl}"
        )
    for e in plan.profile.endpoints:
        state = plan.states[e.id]
        line = f"endpoint {e.name}: {state}"
        health = plan.health.get(e.id)
        if health is not None and health.reason:
            line += f" ({health.reason})"
        why = _skip_reason(plan, e, ctx, answers)
        trace.append(line + (f", skipped: {why}" if why else ""))


def _skip_reason(
    plan: ProfilePlan, e: Endpoint, ctx: QueryContext, answers: _EndpointFilter
) -> str:
    if not e.enabled:
        return "disabled"
    forced = override_in_force(e, ctx.now)
    if forced in (OverrideState.DOWN, OverrideState.DRAIN):
        reason = f" ({e.override.reason})" if e.override and e.override.reason else ""
        return f"operator override {forced}{reason}"
    if e.kind is EndpointKind.NESTED:
        child = plan.children.get(e.id)
        if child is None:
            return f"child profile {e.child} disabled"
        if e not in plan.available:
            have = len(child.available)
            why = f"child profile {e.child}: {have} of {e.min_child_endpoints} "
            for family, need in (
                (4, e.min_child_endpoints_ipv4),
                (6, e.min_child_endpoints_ipv6),
            ):
                if need:
                    count = answering(child.available, family)
                    why += f"(IPv{family}: {count} of {need}) "
            return why + "required available"
    if not answers(e):
        return "cannot answer this type"
    if e not in plan.available:
        return f"not available ({plan.states[e.id]})"
    return ""


def candidates_for(
    plan: ProfilePlan,
    ctx: QueryContext,
    answers: _EndpointFilter,
    trace: list[str] | None,
    key: int | str,
) -> Candidates | None:
    """Who the method may choose from, or None for NODATA.

    The all_down policy applies when nothing in the profile is available (as
    Azure's "all endpoints degraded"), or fewer of the family than the
    profile's min_available (gdnsd's up_thresh); serve_all (Azure and Route 53
    fail open) then lets every enabled endpoint not held back by an operator
    count as available. While some endpoint is up, a type only down endpoints
    could answer is NODATA: an AAAA query gets no dead IPv6 address while IPv4
    works.

    `trace` is None on the DNS path: the per-endpoint lines are for explain.
    `key` names `answers` (the address family, or 0 for SRV targets): the
    result depends on nothing else, so it is kept on the plan under it for the
    next query (explain works it out again, to say why).
    """
    if trace is None:
        try:
            return plan.by_family[key]
        except KeyError:
            pass
    else:
        _trace_states(plan, ctx, answers, trace)
    available = tuple(e for e in plan.available if answers(e))
    usable = tuple(e for e in plan.usable if answers(e))
    minimum = plan.profile.min_available
    below = (
        bool(available)
        and minimum is not None
        and (len(available) < minimum.of(len(usable)))
    )
    if below:
        _note(
            trace,
            f"{len(available)} of {len(usable)} available, below min_available "
            f"{minimum}: as if none were",
        )
        available = ()
    candidates: Candidates | None = None
    if not available and plan.available and not below:
        # Methods that serve whatever the health (geographic) still may.
        _note(trace, "nothing available answers this type (others are up)")
        candidates = Candidates(
            plan.profile, (), usable, plan.parked, plan.ranges, plan.latency
        )
    else:
        if not available:
            _note(trace, f"nothing available: all_down={plan.profile.all_down}")
        if available or plan.profile.all_down is AllDown.SERVE_ALL:
            candidates = Candidates(
                plan.profile,
                available or usable,
                usable,
                plan.parked,
                plan.ranges,
                plan.latency,
            )
    plan.by_family[key] = candidates
    return candidates


def _lines(trace: list[str] | None) -> tuple[str, ...]:
    return () if trace is None else tuple(trace)


def _note(trace: list[str] | None, line: str) -> None:
    if trace is not None:
        trace.append(line)


def decide(
    plan: ProfilePlan,
    family: int,
    ctx: QueryContext,
    draw: Draw,
    trace: list[str] | None,
) -> Decision:
    """Route among the endpoints that can answer this address family.

    Availability is judged per family: when every IPv6 endpoint is down, the
    all_down policy applies to AAAA queries even if IPv4 endpoints are up. A
    nested endpoint is replaced by its child profile's own selection.
    """
    candidates = candidates_for(
        plan, ctx, lambda e: _answers_family(plan, e, family), trace, family
    )
    if candidates is None:
        return _fallback(plan, family)
    decision = route(candidates, ctx, draw)
    _note(trace, decision.why)
    if not plan.children or not any(
        e.kind is EndpointKind.NESTED for e in decision.endpoints
    ):
        return decision
    chosen: list[Endpoint] = []
    scope = decision.scope
    for e in decision.endpoints:
        # No method picks a nested endpoint together with others: multivalue
        # answers address endpoints only, every other method picks one.
        if e.kind is not EndpointKind.NESTED:  # pragma: no cover - see above
            chosen.append(e)
            continue
        _note(trace, f"nested {e.name} → profile {e.child}")
        inner = decide(plan.children[e.id], family, ctx, draw, trace)
        chosen += inner.endpoints
        scope = max(scope, inner.scope)
    return Decision(tuple(chosen), decision.why, scope)


def _fallback(plan: ProfilePlan, family: int) -> Decision:
    """all_down=fallback: the fixed address, when the profile is down (or
    below its min_available) and the address is of the family asked."""
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


def _answers_family(plan: ProfilePlan, endpoint: Endpoint, family: int) -> bool:
    """Can this endpoint answer A (4) or AAAA (6)? A host is a CNAME, which
    answers both; a nested endpoint can if its child has such an endpoint."""
    if endpoint.kind is EndpointKind.HOST:
        return True
    if endpoint.kind is EndpointKind.NESTED:
        child = plan.children.get(endpoint.id)
        return child is not None and any(
            _answers_family(child, e, family) for e in child.profile.endpoints
        )
    return endpoint.address is not None and endpoint.address.version == family


def _is_srv_target(endpoint: Endpoint) -> bool:
    return endpoint.kind is not EndpointKind.ADDRESS or endpoint.address is not None


def _profile_records(plan: ProfilePlan, qname: str, decision: Decision) -> list[Record]:
    ttl = plan.ttl
    hosts = [e for e in decision.endpoints if e.kind is EndpointKind.HOST]
    if hosts and hosts[0].target is not None:
        # A name holds a CNAME or other data, never both (RFC 1034 §3.6.2).
        return [Record(qname, RType.CNAME, ttl, hosts[0].target)]
    kept = plan.address_records
    records = []
    for e in decision.endpoints:
        if e.address is None:
            continue
        key = (qname, e.id, e.address)
        record = kept.get(key)
        if record is None:
            record = kept[key] = address_record(qname, e.address, ttl)
        records.append(record)
    return records


def _srv(
    plan: ProfilePlan,
    service: SrvService,
    ctx: QueryContext,
    draw: Draw,
    trace: list[str] | None,
) -> _Found:
    """SRV targets are the endpoints' own in-zone names (never CNAMEs, RFC 2782),
    with their addresses in the additional section."""
    choices, scope = _srv_choices(plan, ctx, draw, trace, service)
    found = _Found(scope=scope)
    for choice, owner_plan in choices:
        srv, glue = _srv_records(plan, service, choice, owner_plan)
        found.answer.append(srv)
        if glue is not None:
            found.additional.append(glue)
    _note(trace, f"SRV: {len(choices)} target(s)")
    return found


def _srv_records(
    plan: ProfilePlan, service: SrvService, choice: SrvChoice, owner_plan: ProfilePlan
) -> tuple[Record, Record | None]:
    """One SRV record and its target's address, kept on the plan: the same
    choice gives the same records for as long as the plan lives."""
    e = choice.endpoint
    key = (
        service.service,
        service.port,
        owner_plan.fqdn,
        e.id,
        choice.priority,
        choice.weight,
    )
    kept = plan.srv_records.get(key)
    if kept is not None:
        return kept
    target = owner_plan.own_name(e) if e.kind is EndpointKind.ADDRESS else e.target
    assert target is not None
    owner = f"{service.service}.{plan.fqdn}"
    srv = Srv(choice.priority, choice.weight, e.port or service.port, target)
    glue = None
    if e.kind is EndpointKind.ADDRESS and e.address is not None:
        glue = address_record(target, e.address, owner_plan.profile.ttl)
    kept = plan.srv_records[key] = (
        Record(owner, RType.SRV, plan.ttl, srv),
        glue,
    )
    return kept


def _srv_choices(
    plan: ProfilePlan,
    ctx: QueryContext,
    draw: Draw,
    trace: list[str] | None,
    service: SrvService | None = None,
) -> tuple[list[tuple[SrvChoice, ProfilePlan]], int]:
    """The method's SRV choices; a nested endpoint expands into its child's, and
    priorities are renumbered so the parent's order comes first: a child's best
    targets share the parent priority of the nested endpoint, its next ones
    follow. A `service` served by some endpoints only chooses among those."""
    if service is not None and service.endpoints:
        serving = frozenset(service.endpoints)

        def targets(e: Endpoint) -> bool:
            return _is_srv_target(e) and e.name in serving

        candidates = candidates_for(plan, ctx, targets, trace, service.service)
    else:
        candidates = candidates_for(plan, ctx, _is_srv_target, trace, SRV_TARGETS)
    if candidates is None:
        return [], 0
    choices, scope = srv_choices(candidates, ctx, draw)
    if not plan.children:  # nothing nested: the method's choices as they are
        return [(c, plan) for c in choices], scope
    ranked: list[tuple[tuple[int, int], SrvChoice, ProfilePlan]] = []
    for choice in choices:
        e = choice.endpoint
        if e.kind is not EndpointKind.NESTED:
            ranked.append(((choice.priority, 1), choice, plan))
            continue
        _note(trace, f"nested {e.name} → profile {e.child}")
        inner, inner_scope = _srv_choices(plan.children[e.id], ctx, draw, trace)
        scope = max(scope, inner_scope)
        levels = {p: i for i, p in enumerate(sorted({c.priority for c, _ in inner}), 1)}
        ranked += [((choice.priority, levels[c.priority]), c, p) for c, p in inner]
    if all(e.kind is not EndpointKind.NESTED for e in (c.endpoint for c in choices)):
        return [(c, p) for _, c, p in ranked], scope
    dense = {key: i for i, key in enumerate(sorted({key for key, _, _ in ranked}), 1)}
    return [
        (SrvChoice(c.endpoint, dense[key], c.weight), p) for key, c, p in ranked
    ], scope
