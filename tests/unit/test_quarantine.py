"""Poison-proof snapshots: a profile that cannot be loaded or compiled is
quarantined, keeps its last good version where there is one, and never stops
the rest of the configuration from being served or updated."""

from __future__ import annotations

from dataclasses import replace

from app.domain.changes import Changes, ProfileLine, fold, header
from app.domain.model import Config, Method, Quarantined
from app.domain.quarantine import keep_last_good
from app.domain.snapshot import Reuse, compile_snapshot
from tests.builders import make_endpoint, make_profile, make_zone

GOOD = make_profile("app", Method.PRIORITY, make_endpoint("a", "192.0.2.1", id=1), id=1)
SUBNET = make_profile(
    "lan",
    Method.SUBNET,
    make_endpoint("b", "192.0.2.2", subnets=("10.0.0.0/8",), id=2),
    id=2,
)
POISONED = replace(
    SUBNET,
    endpoints=(make_endpoint("b", "192.0.2.2", subnets=("not a network",), id=2),),
)


def _config(*profiles: object) -> Config:
    return Config(zones=(make_zone(*profiles, id=1),))  # type: ignore[arg-type]


def test_a_profile_that_does_not_compile_is_left_out_and_the_rest_is_served() -> None:
    snapshot = compile_snapshot(_config(GOOD, POISONED), {}, 7, 0.0)
    assert "app.tm.example." in snapshot.nodes
    assert "lan.tm.example." not in snapshot.nodes
    assert "b.lan.tm.example." not in snapshot.nodes
    [q] = snapshot.quarantined.values()
    assert (q.profile_id, q.zone, q.name, q.kept) == (2, "tm.example.", "lan", False)
    assert "not a network" in q.reason


def test_the_last_good_version_keeps_answering_after_a_bad_change() -> None:
    good = compile_snapshot(_config(GOOD, SUBNET), {}, 7, 0.0)
    config = _config(GOOD, POISONED)
    bad = compile_snapshot(config, {}, 8, 0.0, Reuse(good, frozenset({2})))
    assert bad.nodes["lan.tm.example."] is good.nodes["lan.tm.example."]
    assert bad.plans[2].profile is SUBNET
    assert bad.quarantined[2].kept
    # Fixed later: the quarantine ends with the next snapshot.
    fixed = compile_snapshot(
        _config(GOOD, SUBNET), {}, 9, 0.0, Reuse(bad, frozenset({2}))
    )
    assert fixed.quarantined == {}
    assert "lan.tm.example." in fixed.nodes


def test_a_profile_that_did_not_load_is_kept_from_the_previous_configuration() -> None:
    previous = _config(GOOD, SUBNET)
    broken = {2: Quarantined(2, "tm.example.", "lan", "address 'fe80::1%eth0'")}
    loaded = replace(_config(GOOD), broken=broken)
    kept = keep_last_good(loaded, previous)
    assert [p.name for p in kept.zones[0].profiles] == ["app", "lan"]
    assert kept.broken[2].kept
    snapshot = compile_snapshot(kept, {}, 8, 0.0)
    assert "lan.tm.example." in snapshot.nodes and snapshot.quarantined[2].kept
    # With nothing to keep, it stays out and is still reported.
    alone = keep_last_good(loaded, Config())
    assert [p.name for p in alone.zones[0].profiles] == ["app"]
    assert not alone.broken[2].kept


def test_a_zone_that_did_not_load_keeps_its_previous_version_whole() -> None:
    previous = Config(
        zones=(make_zone(GOOD, id=1), make_zone(SUBNET, name="b.example.", id=2))
    )
    broken = {-2: Quarantined(-2, "b.example.", "", "bad glue")}
    loaded = Config(zones=(make_zone(GOOD, id=1),), broken=broken)
    kept = keep_last_good(loaded, previous)
    assert [z.name for z in kept.zones] == ["tm.example.", "b.example."]
    assert kept.zones[1].profiles == (SUBNET,)
    assert kept.broken[-2].kept


def test_a_refresh_folds_around_an_unreadable_profile() -> None:
    config = _config(GOOD, SUBNET)
    zone = header(config.zones[0])
    changed = replace(GOOD, ttl=30)
    changes = Changes(
        since=7,
        generation=9,
        zones=(zone,),
        lines={1: ProfileLine(1, "app", None), 2: ProfileLine(1, "lan", None)},
        profiles=((1, changed),),
        health={},
        latency=(),
        broken={2: Quarantined(2, "tm.example.", "lan", "bad row")},
    )
    folded = fold(config, {}, changes)
    assert folded is not None
    assert folded.config.zones[0].profiles == (changed, SUBNET)
    assert folded.config.broken[2].kept
    # The next refresh does not read it again, yet it is still quarantined...
    quiet = replace(changes, profiles=(), broken={})
    again = fold(folded.config, {}, quiet)
    assert again is not None and again.config.broken[2].kept
    # ...until a write brings a version that reads.
    fixed = replace(changes, profiles=((1, SUBNET),), broken={})
    healed = fold(folded.config, {}, fixed)
    assert healed is not None and healed.config.broken == {}
    # A new profile that never read well is left out, not a reason to re-read all.
    newcomer = replace(
        changes,
        lines={**changes.lines, 3: ProfileLine(1, "new", None)},
        broken={3: Quarantined(3, "tm.example.", "new", "bad row")},
    )
    folded = fold(config, {}, newcomer)
    assert folded is not None
    assert [p.name for p in folded.config.zones[0].profiles] == ["app", "lan"]
    assert not folded.config.broken[3].kept


def test_a_config_with_nothing_broken_is_passed_through_untouched() -> None:
    """Every refresh goes through keep_last_good: with nothing broken it must
    hand back the configuration as read, the very objects, which the
    snapshot's plan reuse (by identity) relies on."""
    config = _config(GOOD)
    assert keep_last_good(config, _config(SUBNET)) is config
