"""SRV answers per routing method (DESIGN §3 table), for SIP trunks and the like.

RFC 2782: clients try the lowest priority first and spread load within one
priority by weight. Each method maps onto that as the table says.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from random import Random
from types import MappingProxyType

from app.domain.model import Endpoint, Method
from app.domain.query import QueryContext
from app.domain.routing import Candidates, route
from app.domain.routing.performance import ranked_locations

SHARED_PRIORITY = 10  # weighted and multivalue: every target at one priority


@dataclass(frozen=True, slots=True)
class SrvChoice:
    endpoint: Endpoint
    priority: int
    weight: int


SrvChoices = tuple[list[SrvChoice], int]  # the records, and the ECS scope deciding them
SrvRule = Callable[[Candidates, QueryContext, Random], SrvChoices]


def _by_priority(c: Candidates, ctx: QueryContext, rng: Random) -> SrvChoices:
    """Every available endpoint with its own priority: the failover order."""
    ranked = sorted(c.available, key=lambda e: e.priority)
    return [SrvChoice(e, e.priority, e.weight) for e in ranked], 0


def _by_weight(c: Candidates, ctx: QueryContext, rng: Random) -> SrvChoices:
    """Every available endpoint at one priority, the SRV weight its weight."""
    return [SrvChoice(e, SHARED_PRIORITY, e.weight) for e in c.available], 0


def _multivalue(c: Candidates, ctx: QueryContext, rng: Random) -> SrvChoices:
    """The same window of up to max_return endpoints as A answers, all equal."""
    return [SrvChoice(e, SHARED_PRIORITY, 1) for e in route(c, ctx, rng).endpoints], 0


def _by_proximity(c: Candidates, ctx: QueryContext, rng: Random) -> SrvChoices:
    """Every available endpoint; the closest location gets priority 1, the next 2."""
    ranked, _, scope = ranked_locations(c, c.available, ctx)
    choices = [
        SrvChoice(e, rank, e.weight)
        for rank, (_, group) in enumerate(ranked, start=1)
        for e in sorted(group, key=lambda e: e.priority)
    ]
    return choices, scope


def _matched_only(c: Candidates, ctx: QueryContext, rng: Random) -> SrvChoices:
    """Geographic and subnet: the endpoint the client is mapped to, alone."""
    decision = route(c, ctx, rng)
    return [SrvChoice(e, 1, e.weight) for e in decision.endpoints], decision.scope


SRV_RULES: Mapping[Method, SrvRule] = MappingProxyType(
    {
        Method.PRIORITY: _by_priority,
        Method.WEIGHTED: _by_weight,
        Method.MULTIVALUE: _multivalue,
        Method.PERFORMANCE: _by_proximity,
        Method.GEOGRAPHIC: _matched_only,
        Method.SUBNET: _matched_only,
    }
)
