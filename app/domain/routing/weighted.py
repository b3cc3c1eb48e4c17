"""Weighted: one available endpoint at random, probability proportional to weight."""

from __future__ import annotations

from random import Random

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


def select(c: Candidates, ctx: QueryContext, rng: Random) -> Decision:
    """The random draw comes from the injected `rng`, so tests can seed it."""
    if not c.available:
        return Decision.nodata("no available endpoint")
    [chosen] = rng.choices(c.available, weights=[e.weight for e in c.available])
    total = sum(e.weight for e in c.available)
    return Decision.pick(
        [chosen], f"weighted draw among {len(c.available)} ({chosen.weight}/{total})"
    )


def srv(c: Candidates, ctx: QueryContext, rng: Random) -> SrvChoices:
    """Every available endpoint at one priority, the SRV weight its weight."""
    return [SrvChoice(e, SHARED_PRIORITY, e.weight) for e in c.available], 0


SPEC = MethodSpec(Method.WEIGHTED, select, srv, ClientUse.NOTHING, "Weighted")
