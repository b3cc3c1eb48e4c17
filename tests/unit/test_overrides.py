"""Which override events a change tells: start, change, end, expire."""

from __future__ import annotations

from dataclasses import replace

from app.domain.model import Method, Override, OverrideState, Profile, Zone
from app.domain.overrides import OverrideChange, expired, override_changes
from tests.builders import make_endpoint, make_profile, make_zone

DRAIN = Override(OverrideState.DRAIN, "patching", until=100.0)


def web(**overrides: Override | None) -> Profile:
    endpoints = [
        make_endpoint(name, f"127.0.0.{i + 1}", id=i + 1, override=overrides.get(name))
        for i, name in enumerate(("a", "b", "c"))
    ]
    return make_profile("web", Method.PRIORITY, *endpoints)


def told(before: object, after: object, now: float = 50.0) -> list[tuple[str, str]]:
    return [
        (e.endpoint, e.change.value)
        for e in override_changes("tm.example.", before, after, now)
    ]


def test_each_kind_of_change_is_told_once_per_endpoint() -> None:
    down = Override(OverrideState.DOWN)
    assert told(web(), web(a=DRAIN)) == [("a", "start")]
    assert told(web(a=DRAIN), web(a=down)) == [("a", "change")]
    assert told(web(a=DRAIN), web(a=replace(DRAIN, reason="longer"))) == [
        ("a", "change")
    ]
    assert told(web(a=DRAIN, b=down), web(b=down)) == [("a", "end")]
    assert told(web(a=DRAIN), web(), now=100.0) == [("a", "expire")]
    assert told(web(a=DRAIN), web(a=DRAIN)) == []
    assert told(None, web(c=down)) == [("c", "start")]
    assert told(web(c=down), None) == [("c", "end")]


def test_a_zone_tells_the_overrides_of_its_profiles() -> None:
    zone: Zone = make_zone(web(b=DRAIN))
    [event] = override_changes("tm.example.", zone, None, 0.0)
    assert (event.profile, event.endpoint, event.change) == (
        "web",
        "b",
        OverrideChange.END,
    )
    assert event.override == DRAIN
    assert override_changes("tm.example.", {"latency": 1}, None, 0.0) == []


def test_expired_removes_only_what_ran_out() -> None:
    forever = Override(OverrideState.DOWN, "broken")
    profile = web(a=DRAIN, b=forever)
    assert expired(profile, 99.0) is None
    cleared = expired(profile, 100.0)
    assert cleared is not None
    assert [e.override for e in cleared.endpoints] == [None, forever, None]
