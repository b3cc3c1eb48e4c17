from dataclasses import replace

from app.domain.health import Verdict, after_probe, first_health
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
