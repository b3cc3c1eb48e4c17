"""Weighted: one available endpoint at random, probability proportional to weight."""

from __future__ import annotations

from app.domain.draw import Draw
from app.domain.model import Method
from app.domain.query import Decision, QueryContext
from app.domain.routing.base import (
    SHARED_PRIORITY,
    Candidates,
    ClientUse,
    MethodSpec,
    SrvChoice,
    SrvChoices,
)


def select(c: Candidates, ctx: QueryContext, draw: Draw) -> Decision:
    """The one random choice: an endpoint, in proportion to its weight."""
    if not c.available:
        return Decision.nodata("no available endpoint")
    chosen = c.available[draw.index(len(c.available), [e.weight for e in c.available])]
    total = sum(e.weight for e in c.available)
    return Decision.pick(
        [chosen], f"weighted draw among {len(c.available)} ({chosen.weight}/{total})"
    )


def srv(c: Candidates, ctx: QueryContext, draw: Draw) -> SrvChoices:
    """Every available endpoint at one priority, the SRV weight its weight."""
    return [SrvChoice(e, SHARED_PRIORITY, e.weight) for e in c.available], 0


SPEC = MethodSpec(Method.WEIGHTED, select, srv, ClientUse.NOTHING, "Weighted")
