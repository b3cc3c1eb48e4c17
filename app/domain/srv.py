"""SRV answers per routing method (DESIGN §3 table), for SIP trunks and the like.

RFC 2782: clients try the lowest priority first and spread load within one
priority by weight. Each method maps onto that as the table says; methods
whose selection is a single endpoint (geographic, subnet) will answer with
just that endpoint.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from random import Random
from types import MappingProxyType

from app.domain.model import Endpoint, Method
from app.domain.query import QueryContext

WEIGHTED_PRIORITY = 10  # weighted: every target shares one priority


@dataclass(frozen=True, slots=True)
class SrvChoice:
    endpoint: Endpoint
    priority: int
    weight: int


SrvRule = Callable[[Sequence[Endpoint], QueryContext, Random], list[SrvChoice]]


def _by_priority(
    available: Sequence[Endpoint], ctx: QueryContext, rng: Random
) -> list[SrvChoice]:
    """Every available endpoint with its own priority: failover order is explicit."""
    ranked = sorted(available, key=lambda e: e.priority)
    return [SrvChoice(e, e.priority, e.weight) for e in ranked]


def _by_weight(
    available: Sequence[Endpoint], ctx: QueryContext, rng: Random
) -> list[SrvChoice]:
    """Every available endpoint at one priority, the SRV weight its weight."""
    return [SrvChoice(e, WEIGHTED_PRIORITY, e.weight) for e in available]


SRV_RULES: Mapping[Method, SrvRule] = MappingProxyType(
    {
        Method.PRIORITY: _by_priority,
        Method.WEIGHTED: _by_weight,
    }
)
