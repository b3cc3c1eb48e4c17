from dataclasses import replace

from app.domain.health import Verdict, after_probe, combined, first_health, inverted
from app.domain.model import HealthState, Monitor

UP, DOWN = Verdict(True, "TCP connect in 1 ms"), Verdict(False, "connection refused")


def run(verdicts: list[Verdict], monitor: Monitor) -> list[HealthState]:
    health, states = first_health(0.0), []
    for t, verdict in enumerate(verdicts, start=1):
        health = after_probe(health, verdict, float(t), monitor)
        states.append(health.state)
    return states


def test_new_endpoint_is_checking_until_its_first_verdict() -> None:
    assert first_health(0.0).state is HealthState.CHECKING


def test_offline_only_after_more_than_tolerated_failures() -> None:
    states = run([UP, DOWN, DOWN, DOWN, DOWN], Monitor(tolerated_failures=3))
    assert states == [HealthState.ONLINE] * 4 + [HealthState.OFFLINE]


def test_zero_tolerance_fails_on_the_first_failure() -> None:
    assert run([UP, DOWN], Monitor(tolerated_failures=0))[-1] is HealthState.OFFLINE


def test_one_success_between_failures_resets_the_count() -> None:
    states = run([UP, DOWN, DOWN, UP, DOWN, DOWN], Monitor(tolerated_failures=2))
    assert HealthState.OFFLINE not in states


def test_back_online_after_the_required_successes() -> None:
    monitor = Monitor(tolerated_failures=0, successes_to_online=2)
    states = run([DOWN, UP, UP], monitor)
    assert states == [HealthState.OFFLINE, HealthState.OFFLINE, HealthState.ONLINE]


def test_since_moves_only_on_a_transition_and_the_reason_is_kept() -> None:
    monitor = Monitor(tolerated_failures=1)
    online = after_probe(first_health(0.0), UP, 1.0, monitor)
    still = after_probe(online, UP, 2.0, monitor)
    assert (online.since, still.since) == (1.0, 1.0)
    failing = after_probe(still, DOWN, 3.0, monitor)
    assert (
        failing.state is HealthState.ONLINE and failing.reason == "connection refused"
    )
    assert after_probe(failing, DOWN, 4.0, monitor).since == 4.0


def test_a_timeout_never_counts_as_up() -> None:
    timeout = Verdict(False, "timeout after 2 s")
    health = replace(first_health(0.0), state=HealthState.ONLINE)
    assert after_probe(health, timeout, 1.0, Monitor(tolerated_failures=0)).state is (
        HealthState.OFFLINE
    )


def test_a_composite_verdict_counts_its_checks_and_keeps_every_reason() -> None:
    up = Verdict(True, "SIP 200 OK in 2 ms", 2.0)
    down = Verdict(False, "HTTP 503 Service Unavailable in 4 ms", 4.0, "status")
    parts = [("sip-tls 5061", up), ("http 8080", down)]
    every = combined(parts, 2)
    assert not every.ok and every.outcome == "status" and every.latency_ms == 4.0
    assert every.reason == (
        "1 of 2 checks up (all required): sip-tls 5061: SIP 200 OK in 2 ms; "
        "http 8080: HTTP 503 Service Unavailable in 4 ms"
    )
    any_one = combined(parts, 1)
    assert any_one.ok and any_one.outcome == "ok"
    assert any_one.reason.startswith("1 of 2 checks up (1 required): ")


def test_an_inverted_verdict_says_so() -> None:
    flipped = inverted(Verdict(False, "connection refused", outcome="refused"))
    assert flipped.ok and flipped.reason == "inverted: connection refused"
    assert flipped.outcome == "ok"
    assert inverted(Verdict(True, "HTTP 200 OK in 1 ms", 1.0)).outcome == "inverted"


def test_a_composite_monitor_requires_all_its_checks_unless_it_says_otherwise() -> None:
    two = (Monitor(), Monitor(port=8080))
    assert Monitor(checks=two).required() == 2
    assert Monitor(checks=two, require=1).required() == 1
