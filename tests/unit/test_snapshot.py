"""compile_snapshot() (app/domain/snapshot.py): the names a zone owns and what
each holds, the SOA serial, who is available, when an override runs out, and
a recompile that rebuilds only what changed."""

from __future__ import annotations

from dataclasses import replace
from ipaddress import ip_address
from random import Random

from app.domain.answer import answer
from app.domain.draw import RandomDraw
from app.domain.model import (
    Config,
    EndpointKind,
    Health,
    HealthState,
    Method,
    Monitor,
    OnStale,
    Override,
    OverrideState,
    SrvService,
)
from app.domain.query import QueryContext, RType
from app.domain.snapshot import Reuse, Snapshot, compile_snapshot
from tests.builders import make_endpoint, make_profile, make_zone

SIP = (SrvService("_sip._udp", 5060), SrvService("_sips._tcp", 5061))
APP = make_profile(
    "app",
    Method.PRIORITY,
    make_endpoint("a", "127.0.0.1", id=11),
    make_endpoint("b", "127.0.0.2", priority=2, id=12),
    monitor=Monitor(),
    srv=SIP,
    id=1,
)
DEEP = make_profile(
    "api.eu",
    Method.WEIGHTED,
    make_endpoint("w", "127.0.0.3", id=21),
    monitor=Monitor(),
    id=2,
)
ZONE = make_zone(
    APP,
    DEEP,
    glue=(("ns1.tm.example.", ip_address("127.0.0.53")),),
    id=7,
)
CONFIG = Config((ZONE,))


def test_every_owned_name_has_its_node() -> None:
    snapshot = compile_snapshot(CONFIG, {}, 42, 100.0)
    names = set(snapshot.nodes)
    assert {
        "tm.example.",  # the apex: SOA and NS
        "ns1.tm.example.",  # glue
        "app.tm.example.",
        "a.app.tm.example.",  # each address endpoint's own name, the SRV target
        "b.app.tm.example.",
        "_sip._udp.app.tm.example.",
        "_sips._tcp.app.tm.example.",
        "api.eu.tm.example.",
        "w.api.eu.tm.example.",
    } == names
    assert snapshot.nodes["a.app.tm.example."].addresses == (ip_address("127.0.0.1"),)
    assert snapshot.nodes["ns1.tm.example."].addresses == (ip_address("127.0.0.53"),)
    srv = snapshot.nodes["_sips._tcp.app.tm.example."].srv
    assert srv is not None and srv[1].port == 5061
    # names between the apex and deeper owners exist, empty (RFC 8020)
    assert "eu.tm.example." in snapshot.empty_non_terminals
    assert "_udp.app.tm.example." in snapshot.empty_non_terminals
    assert "nothing.tm.example." not in snapshot.empty_non_terminals


def test_the_soa_serial_follows_the_generation() -> None:
    soa = compile_snapshot(CONFIG, {}, 42, 0.0).soas["tm.example."]
    assert soa.rdata.serial == 42
    wrapped = compile_snapshot(CONFIG, {}, 2**32 + 5, 0.0).soas["tm.example."]
    assert wrapped.rdata.serial == 5


def test_zone_of_takes_the_longest_apex() -> None:
    child = make_zone(name="sub.tm.example.", id=8)
    snapshot = compile_snapshot(Config((ZONE, child)), {}, 1, 0.0)
    assert snapshot.zone_of("x.sub.tm.example.").name == "sub.tm.example."
    assert snapshot.zone_of("x.tm.example.").name == "tm.example."
    assert snapshot.zone_of("tm.example.").name == "tm.example."
    assert snapshot.zone_of("example.") is None
    assert snapshot.zone_of(".") is None


def test_availability_follows_health_and_overrides() -> None:
    offline = {11: Health(HealthState.OFFLINE, since=1.0, reason="HTTP 503")}
    plan = compile_snapshot(CONFIG, offline, 1, 0.0).plans[1]
    assert [e.name for e in plan.available] == ["b"]
    assert [e.name for e in plan.usable] == ["a", "b"]
    assert plan.states[11] is HealthState.OFFLINE
    assert plan.states[12] is HealthState.CHECKING  # no verdict yet: served
    drained = replace(
        APP,
        endpoints=(
            replace(APP.endpoints[0], override=Override(OverrideState.DRAIN, "swap")),
            APP.endpoints[1],
        ),
    )
    plan = compile_snapshot(Config((replace(ZONE, profiles=(drained,)),)), {}, 1, 0.0)
    assert [e.name for e in plan.plans[1].available] == ["b"]


def test_the_snapshot_expires_when_the_first_override_runs_out() -> None:
    def until(at: float | None) -> Override:
        return Override(OverrideState.DOWN, "maintenance", until=at)

    endpoints = (
        replace(APP.endpoints[0], override=until(500.0)),
        replace(APP.endpoints[1], override=until(300.0)),
    )
    zone = replace(ZONE, profiles=(replace(APP, endpoints=endpoints),))
    assert compile_snapshot(Config((zone,)), {}, 1, 100.0).expires_at == 300.0
    assert compile_snapshot(Config((zone,)), {}, 1, 400.0).expires_at == 500.0
    assert compile_snapshot(Config((zone,)), {}, 1, 600.0).expires_at is None
    assert compile_snapshot(CONFIG, {}, 1, 0.0).expires_at is None


def test_a_recompile_keeps_untouched_plans_and_rebuilds_dirty_ones() -> None:
    first = compile_snapshot(CONFIG, {}, 1, 0.0)
    offline = {21: Health(HealthState.OFFLINE, since=1.0)}
    again = compile_snapshot(CONFIG, offline, 2, 1.0, Reuse(first, frozenset({2})))
    assert again.plans[1] is first.plans[1]  # the very same plan object
    assert again.plans[2] is not first.plans[2]
    assert again.plans[2].states[21] is HealthState.OFFLINE
    assert again.empty_non_terminals is first.empty_non_terminals  # same names


def test_glue_for_a_name_server_outside_the_zone_is_not_served() -> None:
    """The zone answers only for names inside it: an out-of-zone name server's
    glue gets no node of its own, while in-zone glue does."""
    zone = replace(
        ZONE,
        ns=("ns1.tm.example.", "ns.provider.example."),
        glue=(
            ("ns.provider.example.", ip_address("192.0.2.53")),
            ("ns1.tm.example.", ip_address("127.0.0.53")),
        ),
    )
    snapshot = compile_snapshot(Config((zone,)), {}, 1, 0.0)
    assert "ns.provider.example." not in snapshot.nodes
    assert snapshot.nodes["ns1.tm.example."].addresses == (ip_address("127.0.0.53"),)


def test_a_child_that_does_not_compile_leaves_its_nested_endpoint_disabled() -> None:
    """A broken child profile is quarantined on its own; the parent still
    compiles, with the nested endpoint disabled, and answers from its other
    endpoints."""
    broken = make_profile(
        "child",
        Method.SUBNET,
        make_endpoint("x", "192.0.2.9", subnets=("not a network",), id=31),
        id=3,
    )
    parent = make_profile(
        "parent",
        Method.PRIORITY,
        make_endpoint("to-child", None, kind=EndpointKind.NESTED, child="child", id=41),
        make_endpoint("direct", "192.0.2.8", priority=2, id=42),
        id=4,
    )
    snapshot = compile_snapshot(Config((make_zone(parent, broken),)), {}, 1, 0.0)
    plan = snapshot.plans[4]
    assert plan.children == {}
    assert plan.states[41] is HealthState.DISABLED
    assert [e.name for e in plan.available] == ["direct"]
    assert list(snapshot.quarantined) == [3]
    assert "not a network" in snapshot.quarantined[3].reason
    assert "child.tm.example." not in snapshot.nodes
    result = answer(
        snapshot, "parent.tm.example.", RType.A, QueryContext(), RandomDraw(Random(1))
    )
    assert [str(r.rdata) for r in result.answer] == ["192.0.2.8"]


# on_stale: what a profile answers while the prober is silent.

_A = make_endpoint("a", "192.0.2.1", id=901)
_B = make_endpoint("b", "192.0.2.2", priority=2, id=902)


def _pool(on_stale: OnStale) -> Config:
    profile = replace(
        make_profile(
            "pool", Method.MULTIVALUE, _A, _B, max_return=2, id=900, monitor=Monitor()
        ),
        on_stale=on_stale,
    )
    return Config((make_zone(profile),))


_B_DOWN = {902: Health(HealthState.OFFLINE, since=0.0)}


def _served(snapshot: Snapshot) -> list[str]:
    result = answer(
        snapshot,
        "pool.tm.example.",
        RType.A,
        QueryContext(),
        RandomDraw(Random(1)),
        explain=True,
    )
    return sorted(str(r.rdata) for r in result.answer)


def test_serve_all_answers_every_enabled_endpoint_once_the_prober_is_stale() -> None:
    """Monitor interval 30 s: stale after 90 s without a heartbeat."""
    config = _pool(OnStale.SERVE_ALL)
    fresh = compile_snapshot(config, _B_DOWN, 1, 1000.0, prober_seen_at=950.0)
    assert _served(fresh) == ["192.0.2.1"] and not fresh.stale_serving
    # The snapshot knows when it would turn stale, so the refresh recompiles then.
    assert fresh.expires_at == 950.0 + 90.0
    stale = compile_snapshot(config, _B_DOWN, 1, 1100.0, prober_seen_at=950.0)
    assert _served(stale) == ["192.0.2.1", "192.0.2.2"] and stale.stale_serving
    trace = answer(
        stale, "pool.tm.example.", RType.A, QueryContext(), RandomDraw(Random(1)), True
    ).trace
    assert (
        "prober stale: every enabled endpoint counts as available (on_stale=serve_all)"
        in trace
    )


def test_keep_answers_from_the_last_states_however_old() -> None:
    stale = compile_snapshot(
        _pool(OnStale.KEEP), _B_DOWN, 1, 1100.0, prober_seen_at=950.0
    )
    assert _served(stale) == ["192.0.2.1"] and not stale.stale_serving
    assert stale.expires_at is None


def test_a_reused_plan_follows_the_prober_going_quiet_and_coming_back() -> None:
    config = _pool(OnStale.SERVE_ALL)
    fresh = compile_snapshot(config, _B_DOWN, 1, 1000.0, prober_seen_at=950.0)
    quiet = compile_snapshot(
        config, _B_DOWN, 1, 1100.0, Reuse(fresh, frozenset()), prober_seen_at=950.0
    )
    assert _served(quiet) == ["192.0.2.1", "192.0.2.2"]
    back = compile_snapshot(
        config, _B_DOWN, 1, 1101.0, Reuse(quiet, frozenset()), prober_seen_at=1101.0
    )
    assert _served(back) == ["192.0.2.1"]
