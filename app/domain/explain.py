"""explain(): the answer tmdns would give one client, and why, as plain data.

It runs the same answer() as the DNS server, so the two cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from ipaddress import ip_network
from random import Random
from typing import Any

from app.domain import names
from app.domain.answer import answer
from app.domain.draw import RandomDraw
from app.domain.health import PROBED_STATES, is_stale
from app.domain.model import IPAddress, StaticData, effective_monitor
from app.domain.query import Locate, QueryContext, Rcode, RType
from app.domain.records import Hinfo, Naptr, Record, Soa, Srv
from app.domain.snapshot import ProfilePlan, Snapshot


@dataclass(frozen=True, slots=True)
class Question:
    name: str
    rtype: int
    client: IPAddress | None
    prefix: int | None = None  # as if an ECS of this length was sent


def rtype_of(text: str) -> int:
    """`A`, `aaaa`, `SRV`, or a number."""
    if text.isdigit():
        return int(text)
    try:
        return RType[text.strip().upper()].value
    except KeyError:
        raise ValueError(f"unknown record type {text!r}") from None


def rdata_text(record: Record) -> str:
    data = record.rdata
    if isinstance(data, Soa):
        return (
            f"{data.mname} {data.rname} {data.serial} {data.refresh} {data.retry} "
            f"{data.expire} {data.minimum}"
        )
    if isinstance(data, Srv):
        return f"{data.priority} {data.weight} {data.port} {data.target}"
    if isinstance(data, Hinfo):
        return f'"{data.cpu}" "{data.os}"'
    if isinstance(data, StaticData):
        return data.text
    if isinstance(data, Naptr):
        return (
            f'{data.order} {data.preference} "{data.flags}" "{data.service}" '
            f'"{data.regexp}" {data.replacement}'
        )
    return str(data)


def _records(records: tuple[Record, ...]) -> list[dict[str, Any]]:
    return [
        {"name": r.name, "type": r.rtype.name, "ttl": r.ttl, "data": rdata_text(r)}
        for r in records
    ]


def _plan(snapshot: Snapshot, qname: str) -> ProfilePlan | None:
    node = snapshot.nodes.get(qname)
    return node.profile or (node.srv[0] if node.srv else None) if node else None


def explained_endpoints(snapshot: Snapshot, name: str) -> list[int]:
    """The ids of the endpoints explain lists for this name, so a caller can
    fetch each vantage's view of them first."""
    plan = _plan(snapshot, names.absolute(name))
    return [e.id for e in plan.profile.endpoints] if plan is not None else []


def _endpoint_states(
    snapshot: Snapshot,
    qname: str,
    now: float,
    prober_seen_at: float | None,
    views: Mapping[int, list[dict[str, Any]]],
) -> list[dict[str, Any]]:
    """The profile's endpoints as DNS sees them, each marked stale when the
    prober has not reported for 3 of its intervals, with each vantage's view."""
    plan = _plan(snapshot, qname)
    if plan is None:
        return []
    return [
        {
            "name": e.name,
            "state": plan.states[e.id].value,
            "stale": plan.states[e.id] in PROBED_STATES
            and is_stale(prober_seen_at, effective_monitor(plan.profile, e), now),
            "vantages": views.get(e.id, []),
        }
        for e in plan.profile.endpoints
    ]


def explain(
    snapshot: Snapshot,
    question: Question,
    now: float,
    locate: Locate,
    rng: Random,
    prober_seen_at: float | None = None,
    views: Mapping[int, list[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    qname = names.absolute(question.name)
    client = question.client
    prefix = (
        question.prefix
        if question.prefix is not None
        else (client.max_prefixlen if client is not None else 0)
    )
    if client is not None and question.prefix is not None:
        # As an ECS option carries it: only the first `prefix` bits of the
        # address, so explain answers exactly what DNS answers.
        client = ip_network((client, prefix), strict=False).network_address
    ctx = QueryContext(client, prefix, now, locate)
    result = answer(snapshot, qname, question.rtype, ctx, RandomDraw(rng), explain=True)
    facts = ctx.geo()
    return {
        "name": qname,
        "type": RType(question.rtype).name
        if question.rtype in RType._value2member_map_
        else str(question.rtype),
        "client": str(client) if client is not None else None,
        "client_location": None
        if facts is None
        else {
            "continent": facts.continent,
            "country": facts.country,
            "subdivision": facts.subdivision,
            "lat": facts.latitude,
            "lon": facts.longitude,
            "network_prefix": facts.prefix,
        },
        "rcode": Rcode(result.rcode).name,
        "answer": _records(result.answer),
        "authority": _records(result.authority),
        "additional": _records(result.additional),
        "ecs_scope": result.scope,
        "endpoints": _endpoint_states(
            snapshot, qname, now, prober_seen_at, views or {}
        ),
        "why": list(result.trace),
        "generation": snapshot.generation,
    }
