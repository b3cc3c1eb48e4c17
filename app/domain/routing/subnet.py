"""Subnet: the endpoint whose ranges hold the client; else the endpoint with no
ranges (the fallback); else NODATA (Azure "Subnet")."""

from __future__ import annotations

from app.domain.draw import Draw
from app.domain.model import Method
from app.domain.query import Decision, QueryContext
from app.domain.ranges import block_scope
from app.domain.routing.base import Candidates, ClientUse, MethodSpec, matched_only


def select(c: Candidates, ctx: QueryContext, draw: Draw) -> Decision:
    """An unavailable match sends its clients to the fallback endpoint. The scope
    is the widest block around the client that gets this same answer: inside
    the matched range, or clear of every range when none matched."""
    client = ctx.client
    available = c.available_ids
    owner_id, block = None, None
    if client is not None:
        owner_id, block = next(
            (
                (eid, r)
                for eid, ranges in c.ranges.items()
                for r in ranges
                if r.contains(client)
            ),
            (None, None),
        )
    everything = [r for ranges in c.ranges.values() for r in ranges]
    scope = 0 if client is None else block_scope(client, block, everything)
    if owner_id is not None and owner_id in available and block is not None:
        owner = next(e for e in c.available if e.id == owner_id)
        return Decision((owner,), f"{client} is in {block.text} ({owner.name})", scope)
    fallbacks = [e for e in c.available if not c.ranges.get(e.id)]
    why = (
        f"{client} is in {block.text}, whose endpoint is unavailable"
        if block
        else (f"no range holds {client}")
    )
    if fallbacks:
        chosen = min(fallbacks, key=lambda e: e.priority)
        return Decision((chosen,), f"{why}: fallback {chosen.name}", scope)
    return Decision((), f"{why} and there is no fallback", scope)


SPEC = MethodSpec(
    Method.SUBNET, select, matched_only(select), ClientUse.ADDRESS, "Subnet"
)
