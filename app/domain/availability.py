"""Which endpoints may be answered, and what to do when none may (DESIGN §4)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from app.domain.model import Endpoint, HealthState, OverrideState

SERVABLE_STATES = frozenset(
    {
        HealthState.ONLINE,
        HealthState.CHECKING,
        HealthState.UNMONITORED,
        HealthState.ALWAYS_SERVE,
    }
)


def override_in_force(endpoint: Endpoint, now: float) -> OverrideState | None:
    """The operator override that applies at `now`; an expired one no longer does."""
    override = endpoint.override
    if override is None or (override.until is not None and override.until <= now):
        return None
    return override.state


def held_back(endpoint: Endpoint, now: float) -> bool:
    """Forced down or draining: no new answers, whatever the health or policy."""
    return override_in_force(endpoint, now) in (OverrideState.DOWN, OverrideState.DRAIN)


def is_available(endpoint: Endpoint, state: HealthState, now: float) -> bool:
    """Enabled, not forced down or drained, and healthy enough (or always_serve)."""
    if not endpoint.enabled:
        return False
    forced = override_in_force(endpoint, now)
    if forced is OverrideState.UP:
        return True
    if forced in (OverrideState.DOWN, OverrideState.DRAIN):
        return False
    return endpoint.always_serve or state in SERVABLE_STATES


def available_endpoints(
    endpoints: Sequence[Endpoint], states: Mapping[int, HealthState], now: float
) -> tuple[Endpoint, ...]:
    """The available subset, in configuration order."""
    return tuple(
        e
        for e in endpoints
        if is_available(e, states.get(e.id, HealthState.CHECKING), now)
    )
