"""Routing methods: one module per method, each with its MethodSpec (how it
chooses A/AAAA answers, how it maps onto SRV, whether it depends on the
client, its Azure name), and METHODS, the one table of them."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from app.domain.draw import Draw
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
from app.domain.routing.base import (
    Candidates,
    ClientUse,
    MethodSpec,
    Router,
    SrvChoice,
    SrvChoices,
)

METHODS: Mapping[Method, MethodSpec] = MappingProxyType(
    {
        spec.method: spec
        for spec in (
            priority.SPEC,
            weighted.SPEC,
            performance.SPEC,
            geographic.SPEC,
            multivalue.SPEC,
            subnet.SPEC,
        )
    }
)


def route(candidates: Candidates, ctx: QueryContext, draw: Draw) -> Decision:
    """Select with the profile's method."""
    return METHODS[candidates.profile.method].select(candidates, ctx, draw)


def srv_choices(candidates: Candidates, ctx: QueryContext, draw: Draw) -> SrvChoices:
    """The SRV records of the profile's method."""
    return METHODS[candidates.profile.method].srv(candidates, ctx, draw)


def depends_on_client(method: Method) -> bool:
    return METHODS[method].client_dependent


__all__ = [
    "METHODS",
    "Candidates",
    "ClientUse",
    "MethodSpec",
    "Router",
    "SrvChoice",
    "depends_on_client",
    "route",
    "srv_choices",
]
