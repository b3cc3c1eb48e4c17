"""Routing methods: one pure function per method, dispatched by a mapping."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from random import Random
from types import MappingProxyType

from app.domain.model import Endpoint, Method, Profile
from app.domain.query import Decision, QueryContext
from app.domain.routing import priority, weighted

Router = Callable[[Profile, Sequence[Endpoint], QueryContext, Random], Decision]

ROUTERS: Mapping[Method, Router] = MappingProxyType(
    {
        Method.PRIORITY: priority.select,
        Method.WEIGHTED: weighted.select,
    }
)


def route(
    profile: Profile, available: Sequence[Endpoint], ctx: QueryContext, rng: Random
) -> Decision:
    """Select among `available` with the profile's method."""
    return ROUTERS[profile.method](profile, available, ctx, rng)
