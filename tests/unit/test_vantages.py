"""Several vantages, one state: the quorum rules, and who votes."""

from __future__ import annotations

import pytest

from app.domain.model import Health, HealthState, Quorum
from app.domain.vantages import VANTAGE_STALE_AFTER, Vantage, after_heartbeat, decide

UP, DOWN, CHECKING = HealthState.ONLINE, HealthState.OFFLINE, HealthState.CHECKING
NOW = 1_000.0


def view(state: HealthState, since: float = 900.0, **more: object) -> Health:
    reason = {UP: "HTTP 200 OK in 1 ms", DOWN: "HTTP 503 in 1 ms"}.get(state, "wait")
    fields: dict[str, object] = {"reason": reason, "checked_at": since + 50}
    return Health(state, since, **(fields | more))  # type: ignore[arg-type]


def states(*seen: HealthState) -> dict[str, Health]:
    return {f"v{i}": view(s) for i, s in enumerate(seen, 1)}


def everyone(views: dict[str, Health]) -> frozenset[str]:
    return frozenset(views)


@pytest.mark.parametrize(
    ("seen", "quorum", "expected"),
    [
        ((UP, DOWN), Quorum.ANY, UP),
        ((UP, DOWN), Quorum.MAJORITY, UP),  # a tie keeps it up
        ((UP, DOWN), Quorum.ALL, DOWN),
        ((UP, DOWN, DOWN), Quorum.ANY, UP),
        ((UP, DOWN, DOWN), Quorum.MAJORITY, DOWN),
        ((UP, UP, DOWN), Quorum.MAJORITY, UP),
        ((UP, UP, DOWN), Quorum.ALL, DOWN),
        ((UP, UP, UP), Quorum.ALL, UP),
        ((DOWN, DOWN), Quorum.ANY, DOWN),
        # A view still checking abstains: the others decide.
        ((UP, CHECKING, CHECKING), Quorum.ALL, UP),
        ((DOWN, CHECKING), Quorum.ANY, DOWN),
    ],
)
def test_quorum_over_the_voting_views(
    seen: tuple[HealthState, ...], quorum: Quorum, expected: HealthState
) -> None:
    views = states(*seen)
    assert decide(views, everyone(views), quorum, None, NOW).state is expected


def test_a_vantage_that_does_not_vote_is_not_counted() -> None:
    views = states(UP, DOWN, DOWN)
    voting = frozenset({"v1", "v2"})  # v3 went quiet
    assert decide(views, voting, Quorum.MAJORITY, None, NOW).state is UP
    assert decide(views, frozenset({"v1"}), Quorum.ALL, None, NOW).state is UP


def test_one_vantage_decides_alone_field_for_field() -> None:
    """With one prober everything is as before vantages: its view is the state."""
    seen = view(DOWN, since=950.0, failures=4, latency_ms=2.5)
    for quorum in Quorum:
        assert decide({"solo": seen}, frozenset({"solo"}), quorum, None, NOW) == seen


def test_no_decisive_vote_keeps_the_state_and_a_new_endpoint_stays_checking() -> None:
    current = view(UP, since=100.0)
    waiting = {"v1": view(CHECKING, since=990.0)}
    kept = decide(waiting, everyone(waiting), Quorum.MAJORITY, current, NOW)
    assert (kept.state, kept.since, kept.reason) == (UP, 100.0, "wait")
    fresh = decide(waiting, everyone(waiting), Quorum.MAJORITY, None, NOW)
    assert (fresh.state, fresh.since) == (CHECKING, 990.0)
    nobody = decide(waiting, frozenset(), Quorum.MAJORITY, None, NOW)
    assert (nobody.state, nobody.since) == (CHECKING, NOW)
    assert decide(waiting, frozenset(), Quorum.MAJORITY, current, NOW) is current
    both_waiting = {"a": view(CHECKING), "b": view(CHECKING)}
    voting = everyone(both_waiting)
    assert decide(both_waiting, voting, Quorum.ALL, current, NOW).state is UP
    assert decide(both_waiting, voting, Quorum.ALL, None, NOW).state is CHECKING


def test_the_reason_shows_every_vantage_and_the_rule() -> None:
    views = {"eu": view(UP, latency_ms=3.0), "us": view(DOWN), "ap": view(CHECKING)}
    decided = decide(views, everyone(views), Quorum.ALL, None, NOW)
    assert decided.reason == (
        "1 of 2 vantages up (all): ap: checking (wait); eu: HTTP 200 OK in 1 ms; "
        "us: HTTP 503 in 1 ms"
    )
    assert decided.latency_ms == 3.0
    assert decided.checked_at == 950.0


def test_since_is_kept_while_the_state_holds_and_dated_by_the_view_that_tipped() -> (
    None
):
    current = view(UP, since=100.0)
    views = {"a": view(UP, since=100.0), "b": view(DOWN, since=800.0)}
    held = decide(views, everyone(views), Quorum.MAJORITY, current, NOW)
    assert (held.state, held.since) == (UP, 100.0)
    tipped = decide(views, everyone(views), Quorum.ALL, current, NOW)
    assert (tipped.state, tipped.since) == (DOWN, 800.0)
    # Tipped by a vantage going quiet, whose view is older than the state it
    # ends: the change happens now.
    old_down = {"b": view(DOWN, since=50.0)}
    quiet = decide(old_down, everyone(old_down), Quorum.ALL, current, NOW)
    assert (quiet.state, quiet.since) == (DOWN, NOW)
    no_latency = {"a": view(UP, checked_at=None), "b": view(UP, checked_at=None)}
    plain = decide(no_latency, everyone(no_latency), Quorum.ALL, None, NOW)
    assert (plain.latency_ms, plain.checked_at) == (None, None)


def vantage(
    name: str, seen: float, voting: bool = True, resumed: float = 0.0
) -> Vantage:
    return Vantage(name, seen, resumed, voting)


def test_a_quiet_vantage_stops_voting_and_comes_back_on_its_next_heartbeat() -> None:
    others = [vantage("a", NOW - 1), vantage("b", NOW - VANTAGE_STALE_AFTER - 1)]
    after, changed = after_heartbeat([*others, vantage("me", NOW - 1)], "me", NOW)
    by_name = {v.name: v for v in after}
    assert by_name["a"].voting and not by_name["b"].voting
    assert [(v.name, v.voting) for v in changed] == [("b", False)]
    assert by_name["me"].seen_at == NOW
    back, changed = after_heartbeat(after, "b", NOW + 1, source="127.0.0.22")
    assert [(v.name, v.voting, v.source) for v in changed] == [
        ("b", True, "127.0.0.22")
    ]
    assert {v.name for v in back} == {"a", "b", "me"}


def test_a_new_vantage_votes_from_its_first_heartbeat() -> None:
    after, changed = after_heartbeat([], "new", NOW)
    assert after == changed == [Vantage("new", NOW, NOW, True)]
    _, again = after_heartbeat(after, "new", NOW + 1)
    assert again == []


def test_a_prober_back_from_an_outage_does_not_judge_the_others_at_once() -> None:
    """After a database outage every heartbeat is old: the first prober back
    waits out the stale window before it calls the others stale."""
    cut_off = [vantage("me", NOW - 60), vantage("other", NOW - 60)]
    after, changed = after_heartbeat(cut_off, "me", NOW)
    assert changed == [] and all(v.voting for v in after)
    me = next(v for v in after if v.name == "me")
    assert me.resumed_at == NOW
    later = NOW + VANTAGE_STALE_AFTER
    after, changed = after_heartbeat(after, "me", later)
    assert [(v.name, v.voting) for v in changed] == [("other", False)]
