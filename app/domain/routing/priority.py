"""Priority: the available endpoint with the lowest priority value (Azure parity).

Failback `homing` returns to the primary as soon as it is back; `parking` stays
on the endpoint in use until that one fails (AudioCodes' proxy redundancy
modes). Which endpoint is in use is kept by the store, so it survives restarts
and is the same on every DNS instance.
"""

from __future__ import annotations

from app.domain.draw import Draw
from app.domain.model import Failback, Method
from app.domain.query import Decision, QueryContext
from app.domain.routing.base import (
    Candidates,
    ClientUse,
    MethodSpec,
    SrvChoice,
    SrvChoices,
)


def select(c: Candidates, ctx: QueryContext, draw: Draw) -> Decision:
    if not c.available:
        return Decision.nodata("no available endpoint")
    if c.profile.failback is Failback.PARKING:
        for endpoint in c.available:
            if endpoint.id == c.parked:
                return Decision.pick([endpoint], f"parked on {endpoint.name} (in use)")
    chosen = min(c.available, key=lambda e: e.priority)
    return Decision.pick([chosen], f"lowest priority available ({chosen.priority})")


def srv(c: Candidates, ctx: QueryContext, draw: Draw) -> SrvChoices:
    """Every available endpoint with its own priority: the failover order."""
    ranked = sorted(c.available, key=lambda e: e.priority)
    return [SrvChoice(e, e.priority, e.weight) for e in ranked], 0


SPEC = MethodSpec(Method.PRIORITY, select, srv, ClientUse.NOTHING, "Priority")
