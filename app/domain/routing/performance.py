"""Performance: the available endpoints at the location closest to the client.

Closeness is the operator's latency table where it covers the client, else the
great-circle distance from the client's GeoIP position. Several endpoints at
the closest location share its clients evenly and deterministically per client
subnet; a location with nothing available passes its clients to the next.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.domain.draw import Draw
from app.domain.geo import distance_km
from app.domain.latency import LatencyEntry
from app.domain.model import Endpoint, Method
from app.domain.query import Decision, QueryContext
from app.domain.routing.base import (
    Candidates,
    ClientUse,
    MethodSpec,
    SrvChoice,
    SrvChoices,
)

SPREAD_PREFIX = {4: 24, 6: 56}  # one client subnet keeps one endpoint
UNKNOWN = float("inf")


def ranked_locations(
    c: Candidates, endpoints: Sequence[Endpoint], ctx: QueryContext
) -> tuple[list[tuple[float, list[Endpoint]]], str, int]:
    """Endpoints grouped by location, closest first, with how closeness was
    measured and the ECS scope of that measurement.

    Locations the latency table measures for this client come first, by round
    trip; the rest follow by great-circle distance; endpoints without a
    location come last.
    """
    groups: dict[object, list[Endpoint]] = {}
    for e in endpoints:
        key = (e.location.latitude, e.location.longitude) if e.location else None
        groups.setdefault(key, []).append(e)
    hit = c.latency.lookup(ctx.client) if ctx.client is not None else None
    facts = ctx.geo()
    here = (
        (facts.latitude, facts.longitude)
        if facts is not None
        and facts.latitude is not None
        and facts.longitude is not None
        else None
    )

    def rank(group: list[Endpoint]) -> tuple[float, float, bool]:
        loc = group[0].location
        rtt = hit[0].rtt_ms.get(loc.region or "", UNKNOWN) if hit and loc else UNKNOWN
        km = (
            distance_km(*here, loc.latitude, loc.longitude) if here and loc else UNKNOWN
        )
        return rtt, km, loc is None

    ranked = sorted(groups.values(), key=rank)
    table_scope = _table_scope(c, ctx, hit)
    # Where the GeoIP position counts, its network bounds the answer as well as
    # the table's block: the table's verdict changes at that block's edge.
    geo_scope = max(table_scope, facts.prefix if facts is not None else 0)
    if hit is not None and rank(ranked[0])[0] < UNKNOWN:
        entry, _ = hit
        measured = [rank(g)[0] for g in ranked if g[0].location is not None]
        tied = len(set(measured)) < len(measured)  # equal round trips: by distance
        return (
            [(rank(g)[0], g) for g in ranked],
            f"latency table {entry.network.text}",
            geo_scope if tied else table_scope,
        )
    if here is None or facts is None:
        return [(0.0, list(endpoints))], "client location unknown", geo_scope
    return [(rank(g)[1], g) for g in ranked], "great-circle distance", geo_scope


def _table_scope(
    c: Candidates, ctx: QueryContext, hit: tuple[LatencyEntry, int] | None
) -> int:
    """The block around the client that the latency table treats alike: inside
    its entry, or clear of every entry when it has none."""
    if hit is not None:
        return hit[1]
    return c.latency.miss_scope(ctx.client) if ctx.client is not None else 0


def spread(group: Sequence[Endpoint], ctx: QueryContext) -> tuple[Endpoint, int]:
    """One endpoint of the group, the same for every client of one /24 (/56)."""
    if len(group) == 1 or ctx.client is None:
        return group[0], 0
    prefix = min(SPREAD_PREFIX[ctx.client.version], ctx.client_prefix or 128)
    bits = ctx.client.max_prefixlen
    subnet = int(ctx.client) >> (bits - prefix) if prefix else 0
    index = (
        (subnet * 2654435761) % (1 << 32) % len(group)
    )  # Knuth's multiplicative hash
    return group[index], prefix


def select(c: Candidates, ctx: QueryContext, draw: Draw) -> Decision:
    if not c.available:
        return Decision.nodata("no available endpoint")
    ranked, how, scope = ranked_locations(c, c.available, ctx)
    closeness, group = ranked[0]
    chosen, spread_scope = spread(sorted(group, key=lambda e: e.priority), ctx)
    where = (
        chosen.location.region
        if chosen.location and chosen.location.region
        else (
            f"{chosen.location.latitude:g},{chosen.location.longitude:g}"
            if chosen.location
            else "no location"
        )
    )
    unit = "ms" if how.startswith("latency") else "km"
    why = f"closest by {how}: {where} ({closeness:.0f} {unit}), {chosen.name}"
    return Decision((chosen,), why, max(scope, spread_scope))


def srv(c: Candidates, ctx: QueryContext, draw: Draw) -> SrvChoices:
    """Every available endpoint; the closest location gets priority 1, the next 2."""
    ranked, _, scope = ranked_locations(c, c.available, ctx)
    choices = [
        SrvChoice(e, rank, e.weight)
        for rank, (_, group) in enumerate(ranked, start=1)
        for e in sorted(group, key=lambda e: e.priority)
    ]
    return choices, scope


SPEC = MethodSpec(Method.PERFORMANCE, select, srv, ClientUse.ADDRESS, "Performance")
