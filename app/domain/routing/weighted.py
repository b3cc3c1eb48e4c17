"""Weighted: one available endpoint at random, probability proportional to weight."""

from __future__ import annotations

from app.domain.draw import Draw
from app.domain.model import Endpoint, Method
from app.domain.query import Decision, QueryContext
from app.domain.routing.base import (
    SHARED_PRIORITY,
    Candidates,
    ClientUse,
    MethodSpec,
    SrvChoice,
    SrvChoices,
)


def _pool(c: Candidates) -> tuple[tuple[Endpoint, ...], bool]:
    """Who is drawn from: the available endpoints with a positive weight, or,
    when none is available, the standby ones (weight 0), as Route 53 treats a
    weight of 0. True when the pool is the standby one."""
    weighted = tuple(e for e in c.available if e.weight > 0)
    return (weighted, False) if weighted else (c.available, True)


def select(c: Candidates, ctx: QueryContext, draw: Draw) -> Decision:
    """The one random choice: an endpoint, in proportion to its weight; standby
    endpoints (weight 0) equally, and only when no weighted one is available."""
    pool, standby = _pool(c)
    if not pool:
        return Decision.nodata("no available endpoint")
    if standby:
        chosen = pool[draw.index(len(pool))]
        return Decision.pick(
            [chosen],
            f"standby draw among {len(pool)} (no endpoint with a weight available)",
        )
    chosen = pool[draw.index(len(pool), [e.weight for e in pool])]
    total = sum(e.weight for e in pool)
    return Decision.pick(
        [chosen], f"weighted draw among {len(pool)} ({chosen.weight}/{total})"
    )


def srv(c: Candidates, ctx: QueryContext, draw: Draw) -> SrvChoices:
    """Every available weighted endpoint at one priority, the SRV weight its
    weight; standby endpoints one priority step later, so a SIP client fails
    over to them by itself (RFC 3263) while DNS answers A/AAAA with them only
    when no weighted endpoint is up."""
    weighted = [
        SrvChoice(e, SHARED_PRIORITY, e.weight) for e in c.available if e.weight
    ]
    later = SHARED_PRIORITY + 10 if weighted else SHARED_PRIORITY
    return weighted + [SrvChoice(e, later, 0) for e in c.available if not e.weight], 0


SPEC = MethodSpec(Method.WEIGHTED, select, srv, ClientUse.NOTHING, "Weighted")
