"""Health hysteresis: one probe verdict moves an endpoint's state. Pure, no clock."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from app.domain.model import Health, HealthState, Monitor


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome of one probe, in words an operator can read."""

    ok: bool
    reason: str
    latency_ms: float | None = None
    outcome: str = "ok"  # for metrics: ok, status, body, timeout, refused, tls, error


def inverted(verdict: Verdict) -> Verdict:
    """Route 53's inverted check: up when the check fails, in words."""
    return Verdict(
        not verdict.ok,
        f"inverted: {verdict.reason}",
        verdict.latency_ms,
        "ok" if not verdict.ok else "inverted",
    )


def combined(parts: Sequence[tuple[str, Verdict]], required: int) -> Verdict:
    """A composite monitor's verdict: up when `required` of the named checks
    are; the reason keeps every check's own, so an operator sees which one
    failed."""
    up = sum(1 for _, v in parts if v.ok)
    ok = up >= required
    rule = "all" if required == len(parts) else f"{required}"
    reasons = "; ".join(f"{name}: {v.reason}" for name, v in parts)
    latencies = [v.latency_ms for _, v in parts if v.latency_ms is not None]
    failed = next((v.outcome for _, v in parts if not v.ok), "ok")
    return Verdict(
        ok,
        f"{up} of {len(parts)} checks up ({rule} required): {reasons}",
        max(latencies) if latencies else None,
        "ok" if ok else failed,
    )


STALE_INTERVALS = 3  # a prober silent for this many intervals is stale

PROBED_STATES = frozenset(
    {HealthState.CHECKING, HealthState.ONLINE, HealthState.OFFLINE}
)


def is_stale(prober_seen_at: float | None, monitor: Monitor, now: float) -> bool:
    """DESIGN §5: when the prober has not reported for 3 of this endpoint's
    intervals, its state is shown as stale rather than silently trusted (DNS
    keeps answering from it). No report at all is stale too."""
    return (
        prober_seen_at is None
        or now - prober_seen_at > STALE_INTERVALS * monitor.interval
    )


@dataclass(frozen=True, slots=True)
class Transition:
    endpoint_id: int
    at: float
    old: HealthState
    new: HealthState
    reason: str


def first_health(now: float) -> Health:
    """A new endpoint is `checking` (and served) until its first verdict (DESIGN §5)."""
    return Health(HealthState.CHECKING, since=now, reason="waiting for the first probe")


def after_probe(prev: Health, verdict: Verdict, now: float, monitor: Monitor) -> Health:
    """Apply one verdict.

    Offline only after more than `tolerated_failures` consecutive failures, so one
    lost packet does not move traffic; online again after `successes_to_online`
    consecutive successes (Azure's "tolerated number of failures").
    """
    if verdict.ok:
        successes, failures = prev.successes + 1, 0
        flips = prev.state is not HealthState.ONLINE and (
            successes >= monitor.successes_to_online
        )
        state = HealthState.ONLINE if flips else prev.state
    else:
        successes, failures = 0, prev.failures + 1
        flips = prev.state is not HealthState.OFFLINE and (
            failures > monitor.tolerated_failures
        )
        state = HealthState.OFFLINE if flips else prev.state
    return replace(
        prev,
        state=state,
        since=now if flips else prev.since,
        reason=verdict.reason,
        failures=failures,
        successes=successes,
        latency_ms=verdict.latency_ms,
        checked_at=now,
    )
