"""Weighted: one available endpoint at random, probability proportional to weight."""

from __future__ import annotations

from collections.abc import Sequence
from random import Random

from app.domain.model import Endpoint, Profile
from app.domain.query import Decision, QueryContext


def select(
    profile: Profile, available: Sequence[Endpoint], ctx: QueryContext, rng: Random
) -> Decision:
    """The random draw comes from the injected `rng`, so tests can seed it."""
    if not available:
        return Decision.nodata("no available endpoint")
    [chosen] = rng.choices(available, weights=[e.weight for e in available])
    total = sum(e.weight for e in available)
    return Decision.pick(
        [chosen], f"weighted draw among {len(available)} ({chosen.weight}/{total})"
    )
