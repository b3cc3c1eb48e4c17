"""Multivalue: several available addresses at once, up to max_return (Route 53)."""

from __future__ import annotations

from app.domain.draw import Draw
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


def select(c: Candidates, ctx: QueryContext, draw: Draw) -> Decision:
    """A window of max_return endpoints starting at a random place in the list,
    so that with more available than max_return every one is handed out
    equally often."""
    pool = [e for e in c.available if e.kind is EndpointKind.ADDRESS]
    if not pool:
        return Decision.nodata("no available address endpoint")
    count = min(c.profile.max_return, len(pool))
    start = draw.index(len(pool))  # the one random choice: where the window starts
    window = [pool[(start + i) % len(pool)] for i in range(count)]
    return Decision.pick(window, f"{count} of {len(pool)} available (max_return)")


def srv(c: Candidates, ctx: QueryContext, draw: Draw) -> SrvChoices:
    """The same window of up to max_return endpoints as A answers, all equal."""
    return [SrvChoice(e, SHARED_PRIORITY, 1) for e in select(c, ctx, draw).endpoints], 0


SPEC = MethodSpec(Method.MULTIVALUE, select, srv, ClientUse.NOTHING, "MultiValue")
