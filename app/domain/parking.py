"""Parking failback: which endpoint a priority profile stays on (AudioCodes'
"parking" proxy redundancy mode, as opposed to Azure's homing)."""

from __future__ import annotations

from collections.abc import Mapping

from app.domain.availability import is_available
from app.domain.model import HealthState, Profile


def next_parked(
    profile: Profile, states: Mapping[int, HealthState], current: int | None, now: float
) -> int | None:
    """Stay on the endpoint in use while it is available; when it is not, move
    to the lowest priority available one. With nothing available, keep it."""
    available = [
        e
        for e in profile.endpoints
        if is_available(e, states.get(e.id, HealthState.CHECKING), now)
    ]
    if not available or any(e.id == current for e in available):
        return current
    return min(available, key=lambda e: e.priority).id
