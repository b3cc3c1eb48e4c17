"""Subnet: the endpoint whose ranges hold the client; else the endpoint with no
ranges (the fallback); else NODATA (Azure "Subnet")."""

from __future__ import annotations

from random import Random

from app.domain.query import Decision, QueryContext
from app.domain.ranges import block_scope
from app.domain.routing.base import Candidates


def select(c: Candidates, ctx: QueryContext, rng: Random) -> Decision:
    """An unavailable match sends its clients to the fallback endpoint. The scope
    is the widest block around the client that gets this same answer."""
    client = ctx.client
    everything = [r for ranges in c.ranges.values() for r in ranges]
    if client is not None:
        for endpoint in c.available:
            for block in c.ranges.get(endpoint.id, ()):
                if block.contains(client):
                    scope = block_scope(client, block, ())
                    return Decision(
                        (endpoint,),
                        f"{client} is in {block.text} ({endpoint.name})",
                        scope,
                    )
    fallbacks = [e for e in c.available if not c.ranges.get(e.id)]
    scope = block_scope(client, None, everything) if client is not None else 0
    if fallbacks:
        chosen = min(fallbacks, key=lambda e: e.priority)
        return Decision(
            (chosen,), f"no range holds {client}: fallback {chosen.name}", scope
        )
    return Decision((), f"no range holds {client} and there is no fallback", scope)
