"""fold() (app/domain/changes.py): what a refresh makes of the rows written
since the last snapshot. Each case is one thing an operator or the prober
does between two refreshes; the folded configuration must be what a full read
would give, with exactly the touched profiles to rebuild, or None where only
a full read can tell."""

from __future__ import annotations

from dataclasses import replace

from app.domain.changes import Changes, ProfileLine, fold, header
from app.domain.model import Config, Health, HealthState, Method, Quarantined
from tests.builders import make_endpoint, make_profile, make_zone

APP = make_profile(
    "app",
    Method.PRIORITY,
    make_endpoint("a", "127.0.0.1", id=11),
    make_endpoint("b", "127.0.0.2", priority=2, id=12),
    id=1,
)
WEB = make_profile("web", Method.WEIGHTED, make_endpoint("w", "127.0.0.3", id=21), id=2)
ZONE = make_zone(APP, WEB, id=7)
CONFIG = Config((ZONE,))
UP = Health(HealthState.ONLINE, since=1.0)
DOWN = Health(HealthState.OFFLINE, since=2.0, reason="HTTP 503")
HEALTH = {11: UP, 12: UP, 21: UP}
LINES = {1: ProfileLine(7, "app", None), 2: ProfileLine(7, "web", None)}


def changes(**over: object) -> Changes:
    """Nothing written since generation 5: the quiet refresh."""
    base = Changes(
        since=5,
        generation=6,
        zones=(header(ZONE),),
        lines=LINES,
        profiles=(),
        health={},
        latency=(),
    )
    return replace(base, **over)


def profiles(config: Config) -> dict[str, tuple[int, ...]]:
    return {p.name: tuple(e.id for e in p.endpoints) for p in config.zones[0].profiles}


def test_nothing_written_rebuilds_nothing_and_keeps_the_health_map() -> None:
    folded = fold(CONFIG, HEALTH, changes())
    assert folded is not None
    assert folded.config.zones == CONFIG.zones
    assert folded.dirty == frozenset()
    assert folded.health is HEALTH  # not even copied


def test_a_health_transition_rebuilds_only_its_profile() -> None:
    folded = fold(CONFIG, HEALTH, changes(health={12: DOWN}))
    assert folded is not None
    assert folded.dirty == {1}
    assert folded.health[12] == DOWN and folded.health[11] == UP
    assert HEALTH[12] == UP  # the snapshot's own map is left as it was


def test_a_health_row_of_an_unknown_endpoint_rebuilds_nothing() -> None:
    folded = fold(CONFIG, HEALTH, changes(health={99: DOWN}))
    assert folded is not None and folded.dirty == frozenset()


def test_an_edited_profile_replaces_the_old_one_and_drops_removed_endpoints() -> None:
    edited = replace(APP, endpoints=APP.endpoints[:1], ttl=30)
    folded = fold(CONFIG, HEALTH, changes(profiles=((7, edited),)))
    assert folded is not None
    assert profiles(folded.config) == {"app": (11,), "web": (21,)}
    assert folded.config.zones[0].profiles[0].ttl == 30
    assert folded.dirty == {1}
    assert 12 not in folded.health and 11 in folded.health


def test_a_new_profile_is_added_in_id_order() -> None:
    new = make_profile("new", Method.PRIORITY, make_endpoint("n", id=31), id=0)
    new = replace(new, id=0)  # sorts first
    lines = {**LINES, 0: ProfileLine(7, "new", None)}
    folded = fold(CONFIG, HEALTH, changes(profiles=((7, new),), lines=lines))
    assert folded is not None
    assert [p.name for p in folded.config.zones[0].profiles] == ["new", "app", "web"]
    assert folded.dirty == {0}


def test_a_deleted_profile_goes_with_its_endpoints_health() -> None:
    folded = fold(CONFIG, HEALTH, changes(lines={1: LINES[1]}))
    assert folded is not None
    assert profiles(folded.config) == {"app": (11, 12)}
    assert folded.dirty == {2}
    assert 21 not in folded.health


def test_a_moved_parking_rebuilds_that_profile() -> None:
    parked = {1: ProfileLine(7, "app", 12), 2: LINES[2]}
    folded = fold(CONFIG, HEALTH, changes(lines=parked))
    assert folded is not None
    assert folded.dirty == {1}
    assert folded.config.parked == {1: 12}


def test_wide_changes_need_a_full_read() -> None:
    renamed = {1: ProfileLine(7, "renamed", None), 2: LINES[2]}
    assert fold(CONFIG, HEALTH, changes(lines=renamed)) is None
    new_ttl = (header(replace(ZONE, negative_ttl=30)),)
    assert fold(CONFIG, HEALTH, changes(zones=new_ttl)) is None
    latency = (("10.0.0.0/8", {"aws:eu-west-1": 5.0}),)
    assert fold(CONFIG, HEALTH, changes(latency=latency)) is None
    unexplained = {**LINES, 3: ProfileLine(7, "ghost", None)}
    assert fold(CONFIG, HEALTH, changes(lines=unexplained)) is None


def test_an_unreadable_new_profile_is_left_out_and_reported() -> None:
    bad = Quarantined(3, ZONE.name, "bad", "endpoints.0.address: not an address")
    lines = {**LINES, 3: ProfileLine(7, "bad", None)}
    folded = fold(CONFIG, HEALTH, changes(lines=lines, broken={3: bad}))
    assert folded is not None
    assert profiles(folded.config) == {"app": (11, 12), "web": (21,)}
    assert folded.config.broken == {3: bad}  # no good version to keep


def test_an_unreadable_known_profile_keeps_its_last_good_version() -> None:
    bad = Quarantined(2, ZONE.name, "web", "method: unknown")
    folded = fold(CONFIG, HEALTH, changes(broken={2: bad}))
    assert folded is not None
    assert profiles(folded.config) == {"app": (11, 12), "web": (21,)}
    assert folded.config.broken == {2: bad.keeping()}


def test_a_quarantine_lasts_until_the_profile_is_written_again() -> None:
    bad = Quarantined(2, ZONE.name, "web", "method: unknown", kept=True)
    quarantined = replace(CONFIG, broken={2: bad})
    still = fold(quarantined, HEALTH, changes())
    assert still is not None and still.config.broken == {2: bad}
    fixed = fold(quarantined, HEALTH, changes(profiles=((7, WEB),)))
    assert fixed is not None and fixed.config.broken == {}
    deleted = fold(quarantined, HEALTH, changes(lines={1: LINES[1]}))
    assert deleted is not None and deleted.config.broken == {}
