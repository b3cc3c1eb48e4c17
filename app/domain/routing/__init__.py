"""Routing methods: one pure function per method, dispatched by a mapping."""

from __future__ import annotations

from collections.abc import Mapping
from random import Random
from types import MappingProxyType

from app.domain.model import Method
from app.domain.query import Decision, QueryContext
from app.domain.routing import (
    geographic,
    multivalue,
    performance,
    priority,
    subnet,
    weighted,
)
from app.domain.routing.base import Candidates, Router

ROUTERS: Mapping[Method, Router] = MappingProxyType(
    {
        Method.PRIORITY: priority.select,
        Method.WEIGHTED: weighted.select,
        Method.PERFORMANCE: performance.select,
        Method.GEOGRAPHIC: geographic.select,
        Method.MULTIVALUE: multivalue.select,
        Method.SUBNET: subnet.select,
    }
)


def route(candidates: Candidates, ctx: QueryContext, rng: Random) -> Decision:
    """Select with the profile's method."""
    return ROUTERS[candidates.profile.method](candidates, ctx, rng)


__all__ = ["ROUTERS", "Candidates", "Router", "route"]
