"""Several probers, one state: an endpoint's health is decided over the
vantages whose heartbeat is fresh, by its monitor's quorum. Pure, no clock.

Each vantage (a prober instance, named by TMDNS_PROBER__VANTAGE) keeps its
own view of every endpoint, with its own hysteresis (app.domain.health);
`decide` turns the voting views into the state DNS answers from. A vantage
that goes quiet stops voting after VANTAGE_STALE_AFTER: that is an event of
its own, never a failover by itself. With one vantage the decided health is
that vantage's, field for field, as before vantages existed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from app.domain.health import first_health
from app.domain.model import Health, HealthState, Quorum

# Seconds without a heartbeat (sent every second) before a vantage stops
# voting: long enough for a database failover or a busy event loop, short
# enough that a dead prober's last "up" does not hold an endpoint for long.
VANTAGE_STALE_AFTER = 5.0

DECISIVE = (HealthState.ONLINE, HealthState.OFFLINE)


@dataclass(frozen=True, slots=True)
class Vantage:
    """One prober as the store knows it."""

    name: str
    seen_at: float  # its last heartbeat
    resumed_at: float  # when its current unbroken run of heartbeats began
    voting: bool  # whether its views counted at the last decision
    source: str | None = None  # the address its probes leave from, if set

    def fresh(self, now: float) -> bool:
        return now - self.seen_at <= VANTAGE_STALE_AFTER


def after_heartbeat(
    vantages: Sequence[Vantage], beating: str, now: float, source: str | None = None
) -> tuple[list[Vantage], list[Vantage]]:
    """Every vantage after `beating` reported at `now`, and those whose vote
    changed. The one beating votes; it judges the others (fresh ones vote,
    quiet ones stop) only once its own heartbeats have run unbroken for the
    stale window: after a database outage every heartbeat is old, and the
    first prober back must not decide alone."""
    known = {v.name: v for v in vantages}
    own = known.get(beating)
    if own is None or not own.fresh(now):
        own = Vantage(beating, now, now, own.voting if own else False, source)
    own = replace(own, seen_at=now, source=source)
    judges = now - own.resumed_at >= VANTAGE_STALE_AFTER
    after: list[Vantage] = []
    changed: list[Vantage] = []
    for v in [*(v for v in vantages if v.name != beating), own]:
        voting = True if v is own else (v.fresh(now) if judges else v.voting)
        new = replace(v, voting=voting)
        after.append(new)
        if voting != (known[v.name].voting if v.name in known else False):
            changed.append(new)
    return after, changed


def decide(
    views: Mapping[str, Health],
    voting: frozenset[str],
    quorum: Quorum,
    current: Health | None,
    now: float,
) -> Health:
    """The state DNS answers from, over the views of the voting vantages.

    A view still `checking` abstains; with no decisive vote the state stays
    what it was (a new endpoint stays `checking`, and is served). `majority`
    fails an endpoint only when more than half of the decisive votes see it
    down: a tie keeps it up, because the point of several vantages is that
    one vantage losing its route does not move traffic.
    """
    voters = sorted((name, h) for name, h in views.items() if name in voting)
    if not voters:
        return current or first_health(now)
    decisive = [h for _, h in voters if h.state in DECISIVE]
    up = sum(1 for h in decisive if h.state is HealthState.ONLINE)
    state = _quorum_state(quorum, up, len(decisive), current)
    since = _since(state, [h for _, h in voters], current, now)
    if len(voters) == 1:
        return replace(voters[0][1], state=state, since=since)
    latencies = [h.latency_ms for _, h in voters if h.latency_ms is not None]
    checked = [h.checked_at for _, h in voters if h.checked_at is not None]
    views_text = "; ".join(f"{name}: {_view_text(h)}" for name, h in voters)
    return Health(
        state=state,
        since=since,
        reason=f"{up} of {len(decisive)} vantages up ({quorum.value}): {views_text}",
        failures=max(h.failures for _, h in voters),
        successes=max(h.successes for _, h in voters),
        latency_ms=min(latencies) if latencies else None,
        checked_at=max(checked) if checked else None,
    )


def _since(
    state: HealthState, views: list[Health], current: Health | None, now: float
) -> float:
    """When the decided state began: kept while it holds; on a change, the
    moment the view that tipped it flipped (one vantage: its own time, as
    before vantages), unless that is older than the state it ends (a vantage
    going quiet tipped it): then now."""
    if current is not None and current.state is state:
        return current.since
    tipped = max(h.since for h in views if h.state is state)
    return tipped if current is None or tipped >= current.since else now


def _quorum_state(
    quorum: Quorum, up: int, decisive: int, current: Health | None
) -> HealthState:
    if decisive == 0:
        return current.state if current is not None else HealthState.CHECKING
    if quorum is Quorum.ANY:
        ok = up >= 1
    elif quorum is Quorum.ALL:
        ok = up == decisive
    else:
        ok = 2 * up >= decisive
    return HealthState.ONLINE if ok else HealthState.OFFLINE


def _view_text(health: Health) -> str:
    if health.state in DECISIVE:
        return health.reason
    return f"{health.state.value} ({health.reason})"
