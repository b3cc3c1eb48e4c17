"""Priority: the available endpoint with the lowest priority value (Azure parity)."""

from __future__ import annotations

from collections.abc import Sequence
from random import Random

from app.domain.model import Endpoint, Profile
from app.domain.query import Decision, QueryContext


def select(
    profile: Profile, available: Sequence[Endpoint], ctx: QueryContext, rng: Random
) -> Decision:
    """Homing failback: the primary is chosen again as soon as it is available."""
    if not available:
        return Decision.nodata("no available endpoint")
    chosen = min(available, key=lambda e: e.priority)
    return Decision.pick([chosen], f"lowest priority available ({chosen.priority})")
