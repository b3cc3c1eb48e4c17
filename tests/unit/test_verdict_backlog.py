"""Verdicts kept through a database outage: bounded, in order, and never
losing a state change (the transition history must stay complete)."""

from __future__ import annotations

from app.domain.model import Health, HealthState
from app.prober.worker import keep_bounded
from app.store.base import HealthUpdate

ON, OFF = HealthState.ONLINE, HealthState.OFFLINE


def _verdict(
    endpoint: int, state: HealthState, at: float, prev: HealthState, since: float = 0
) -> HealthUpdate:
    """A probe at `at`; the state has held since `since`."""
    return HealthUpdate(endpoint, Health(state, since, checked_at=at), prev)


def test_under_the_limit_nothing_changes() -> None:
    updates = [_verdict(1, ON, t, ON) for t in range(5)]
    assert keep_bounded(updates, 5) is updates


def test_past_the_limit_runs_merge_and_every_transition_stays() -> None:
    # Endpoint 1 goes offline at t=3 and back at t=7, probed every second; 2 stays up.
    updates = []
    state, since = ON, 0.0
    for t in range(10):
        new = OFF if 3 <= t < 7 else ON
        since = float(t) if new is not state else since
        updates.append(_verdict(1, new, float(t), state, since))
        updates.append(_verdict(2, ON, float(t), ON))
        state = new
    kept = keep_bounded(updates, 6)
    ours = [u for u in kept if u.endpoint_id == 1]
    changes = [(u.previous, u.health.state) for u in ours]
    assert changes == [(ON, ON), (ON, OFF), (OFF, ON)]
    # Each merged verdict is the latest probe; each transition keeps its real time.
    assert [u.health.checked_at for u in ours] == [2.0, 6.0, 9.0]
    assert [u.health.since for u in ours] == [0.0, 3.0, 7.0]
    assert len(kept) <= 6
    assert [u.endpoint_id for u in kept if u.endpoint_id == 2] == [2]


def test_when_changes_alone_exceed_the_limit_the_oldest_go() -> None:
    updates = [
        _verdict(1, ON if t % 2 else OFF, float(t), OFF if t % 2 else ON)
        for t in range(10)
    ]
    kept = keep_bounded(updates, 4)
    assert kept == updates[-4:]
