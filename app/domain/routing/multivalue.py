"""Multivalue: several available addresses at once, up to max_return (Route 53)."""

from __future__ import annotations

from random import Random

from app.domain.model import EndpointKind, Method
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
    """A window of max_return endpoints starting at a random place in the list,
    so that with more available than max_return every one is handed out
    equally often."""
    pool = [e for e in c.available if e.kind is EndpointKind.ADDRESS]
    if not pool:
        return Decision.nodata("no available address endpoint")
    count = min(c.profile.max_return, len(pool))
    start = rng.randrange(len(pool))
    window = [pool[(start + i) % len(pool)] for i in range(count)]
    return Decision.pick(window, f"{count} of {len(pool)} available (max_return)")


def srv(c: Candidates, ctx: QueryContext, rng: Random) -> SrvChoices:
    """The same window of up to max_return endpoints as A answers, all equal."""
    return [SrvChoice(e, SHARED_PRIORITY, 1) for e in select(c, ctx, rng).endpoints], 0


SPEC = MethodSpec(Method.MULTIVALUE, select, srv, ClientUse.NOTHING, "MultiValue")
