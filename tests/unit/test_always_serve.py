"""always_serve (Azure's "Always Serve"): the endpoint is never probed, is
answered whatever, shows as `always_serve` rather than offline, and does not
apply to nested endpoints."""

from __future__ import annotations

from app.domain.model import (
    Config,
    EndpointKind,
    Health,
    HealthState,
    Method,
    Monitor,
)
from app.domain.snapshot import Snapshot, compile_snapshot
from app.domain.validation import profile_problems
from app.prober.worker import targets_of
from tests.builders import make_endpoint, make_profile, make_zone

PROBED = Monitor()  # TCP
ALWAYS = make_endpoint("always", "192.0.2.1", always_serve=True, priority=1, id=1)
PROBED_ONE = make_endpoint("probed", "192.0.2.2", priority=2, id=2)
PROFILE = make_profile("app", Method.PRIORITY, ALWAYS, PROBED_ONE, monitor=PROBED)


def _snapshot(health: dict[int, Health]) -> Snapshot:
    return compile_snapshot(Config((make_zone(PROFILE),)), health, 1, 0.0)


def test_it_is_not_probed() -> None:
    snapshot = _snapshot({})
    assert set(targets_of(snapshot)) == {2}


def test_it_shows_as_always_serve_and_is_answered_even_with_an_offline_row() -> None:
    # A row left from before the flag was set must not make it offline.
    snapshot = _snapshot({1: Health(HealthState.OFFLINE, 0.0, "timeout")})
    plan = snapshot.nodes["app.tm.example."].profile
    assert plan is not None
    assert plan.states[1] is HealthState.ALWAYS_SERVE
    assert ALWAYS in plan.available


def test_it_is_refused_on_a_nested_endpoint() -> None:
    nested = make_endpoint(
        "n", None, kind=EndpointKind.NESTED, child="other", always_serve=True, id=3
    )
    problems = profile_problems(make_profile("app", Method.PRIORITY, nested))
    assert [p.field for p in problems] == ["endpoints.0.always_serve"]
