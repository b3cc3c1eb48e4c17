"""Geographic: the endpoint owning the client's most specific geo code (Azure).

The match is served whatever its health, as in Azure, unless the profile sets
geo_failover: then an unavailable match passes the client up the hierarchy
(subdivision → country → continent → WORLD).
"""

from __future__ import annotations

from app.domain.draw import Draw
from app.domain.geo import hierarchy
from app.domain.model import Method
from app.domain.query import Decision, QueryContext
from app.domain.routing.base import Candidates, ClientUse, MethodSpec, matched_only


def select(c: Candidates, ctx: QueryContext, draw: Draw) -> Decision:
    facts = ctx.geo()
    scope = facts.prefix if facts is not None else 0
    owners, available = c.geo_owners, c.available_ids
    for code in hierarchy(facts):
        endpoint = owners.get(code)
        if endpoint is None:
            continue
        if endpoint.id in available or not c.profile.geo_failover:
            return Decision((endpoint,), f"geo code {code} → {endpoint.name}", scope)
    return Decision((), f"no endpoint for {'/'.join(hierarchy(facts))}", scope)


SPEC = MethodSpec(
    Method.GEOGRAPHIC, select, matched_only(select), ClientUse.PLACE, "Geographic"
)
