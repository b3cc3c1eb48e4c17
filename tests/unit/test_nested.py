"""Nested endpoints (DESIGN §4), through compile_snapshot and answer(): the
parent answers with its child profile's selection, and a nested endpoint is
available while its child has at least min_child_endpoints available."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from random import Random

import pytest

from app.domain.answer import Answer, answer
from app.domain.draw import RandomDraw
from app.domain.model import (
    Config,
    Endpoint,
    EndpointKind,
    Health,
    HealthState,
    Method,
    Monitor,
    Override,
    OverrideState,
    Profile,
    SrvService,
)
from app.domain.query import GeoFacts, QueryContext, RType
from app.domain.snapshot import Snapshot, compile_snapshot
from tests.builders import make_endpoint, make_profile, make_zone
from tests.unit.routing.support import ctx_for, locator

TCP = Monitor()
SIP = SrvService("_sip._udp", 5060)

E1 = make_endpoint("e1", "192.0.2.11", priority=1, id=11)
E2 = make_endpoint("e2", "192.0.2.12", priority=2, id=12)
U1 = make_endpoint("u1", "198.51.100.21", priority=1, id=21)
U2 = make_endpoint("u2", "198.51.100.22", priority=2, id=22)
DIRECT = make_endpoint("direct", "203.0.113.3", priority=3, id=3)
EU = make_profile("eu", Method.PRIORITY, E1, E2, monitor=TCP, ttl=30)
US = make_profile("us", Method.PRIORITY, U1, U2, monitor=TCP, ttl=30)


def nested(name: str, child: str, eid: int, priority: int, **over) -> Endpoint:
    return make_endpoint(
        name,
        None,
        kind=EndpointKind.NESTED,
        child=child,
        id=eid,
        priority=priority,
        **over,
    )


N_EU = nested("to-eu", "eu", 1, 1)
N_US = nested("to-us", "us", 2, 2)


def snapshot_of(*profiles: Profile, offline: Iterable[int] = ()) -> Snapshot:
    health = {i: Health(HealthState.OFFLINE, since=0.0) for i in offline}
    return compile_snapshot(Config((make_zone(*profiles),)), health, 1, 0.0)


def ask(
    snapshot: Snapshot,
    name: str = "app.tm.example.",
    rtype: RType = RType.A,
    ctx: QueryContext | None = None,
    rng: Random | None = None,
) -> Answer:
    return answer(
        snapshot,
        name,
        rtype,
        ctx or QueryContext(),
        rng or RandomDraw(Random(1)),
        explain=True,
    )


def data(result: Answer) -> list[str]:
    return [str(r.rdata) for r in result.answer]


def parent(*endpoints: Endpoint, method: Method = Method.PRIORITY, **over) -> Profile:
    return make_profile("app", method, *endpoints, **over)


@pytest.mark.parametrize(
    ("offline", "expected"),
    [
        ((), ["192.0.2.11"]),  # the child's own choice: its primary
        ((11,), ["192.0.2.12"]),  # the child fails over inside itself
        ((11, 12), ["198.51.100.21"]),  # child empty: the parent fails over
        ((11, 12, 21), ["198.51.100.22"]),
        ((11, 12, 21, 22), ["203.0.113.3"]),  # both children empty: direct
        ((3,), ["192.0.2.11"]),
    ],
)
def test_the_parent_answers_with_its_childs_selection(offline, expected) -> None:
    snapshot = snapshot_of(parent(N_EU, N_US, DIRECT), EU, US, offline=offline)
    assert data(ask(snapshot)) == expected


@pytest.mark.parametrize(
    ("min_child", "offline", "state", "expected"),
    [
        (1, (), HealthState.ONLINE, ["192.0.2.11"]),
        (1, (11,), HealthState.ONLINE, ["192.0.2.12"]),
        (1, (11, 12), HealthState.OFFLINE, ["198.51.100.21"]),
        (2, (), HealthState.ONLINE, ["192.0.2.11"]),
        (2, (11,), HealthState.OFFLINE, ["198.51.100.21"]),  # 1 < 2
        (2, (12,), HealthState.OFFLINE, ["198.51.100.21"]),
        (3, (), HealthState.OFFLINE, ["198.51.100.21"]),  # the child has only 2
    ],
)
def test_a_nested_endpoint_is_available_while_enough_children_are(
    min_child, offline, state, expected
) -> None:
    to_eu = replace(N_EU, min_child_endpoints=min_child)
    snapshot = snapshot_of(parent(to_eu, N_US), EU, US, offline=offline)
    assert snapshot.nodes["app.tm.example."].profile.states[1] is state
    assert data(ask(snapshot)) == expected


def test_when_every_child_is_empty_serve_all_reaches_into_the_child() -> None:
    snapshot = snapshot_of(parent(N_EU, N_US), EU, US, offline=(11, 12, 21, 22))
    result = ask(snapshot)
    # parent: serve_all picks the first nested endpoint; the child: serve_all too
    assert data(result) == ["192.0.2.11"]


@pytest.mark.parametrize(
    "to_eu",
    [
        replace(N_EU, enabled=False),
        replace(N_EU, override=Override(OverrideState.DOWN, "maintenance")),
        replace(N_EU, override=Override(OverrideState.DRAIN, "move")),
        replace(N_EU, child="missing"),
    ],
    ids=["disabled", "forced-down", "draining", "no-such-child"],
)
def test_a_held_back_or_broken_nested_endpoint_is_skipped(to_eu) -> None:
    snapshot = snapshot_of(parent(to_eu, N_US), EU, US)
    assert data(ask(snapshot)) == ["198.51.100.21"]


def test_a_disabled_child_profile_makes_its_nested_endpoint_unavailable() -> None:
    snapshot = snapshot_of(parent(N_EU, N_US), replace(EU, enabled=False), US)
    assert snapshot.nodes["app.tm.example."].profile.states[1] is (HealthState.DISABLED)
    assert data(ask(snapshot)) == ["198.51.100.21"]


def test_the_child_still_answers_on_its_own_name() -> None:
    snapshot = snapshot_of(parent(N_EU, N_US), EU, US, offline=(11,))
    assert data(ask(snapshot, "eu.tm.example.")) == ["192.0.2.12"]
    assert data(ask(snapshot, "us.tm.example.")) == ["198.51.100.21"]


def test_nesting_goes_more_than_one_level_deep() -> None:
    mid = make_profile("mid", Method.PRIORITY, nested("to-eu2", "eu", 31, 1))
    top = parent(nested("to-mid", "mid", 41, 1), N_US)
    healthy = snapshot_of(top, mid, EU, US)
    assert data(ask(healthy)) == ["192.0.2.11"]
    eu_down = snapshot_of(top, mid, EU, US, offline=(11, 12))
    assert data(ask(eu_down)) == ["198.51.100.21"]


def test_a_weighted_parent_shares_clients_between_children_by_weight() -> None:
    top = parent(
        replace(N_EU, weight=3), replace(N_US, weight=1), method=Method.WEIGHTED
    )
    snapshot = snapshot_of(top, EU, US)
    rng, n = RandomDraw(Random(1234)), 4000
    seen = Counter(data(ask(snapshot, rng=rng))[0] for _ in range(n))
    assert set(seen) == {"192.0.2.11", "198.51.100.21"}
    # sd of the share at n = 4,000 is 0.0068: abs 0.03 is over 4 sigma
    assert seen["192.0.2.11"] / n == pytest.approx(0.75, abs=0.03)


def test_a_multivalue_child_gives_the_parent_several_addresses() -> None:
    child = make_profile("eu", Method.MULTIVALUE, E1, E2, max_return=2, monitor=TCP)
    snapshot = snapshot_of(parent(N_EU, N_US), child, US)
    assert sorted(data(ask(snapshot))) == ["192.0.2.11", "192.0.2.12"]


def test_a_client_dependent_child_sets_the_parents_ecs_scope() -> None:
    child = make_profile(
        "eu",
        Method.GEOGRAPHIC,
        replace(E1, geo=("DE",)),
        replace(E2, geo=("WORLD",)),
    )
    locate = locator({"10.1.0.0/16": GeoFacts("EU", "DE", None)})
    snapshot = snapshot_of(parent(N_EU, N_US), child, US)
    german = ask(snapshot, ctx=ctx_for("10.1.2.0", locate, prefix=24))
    assert data(german) == ["192.0.2.11"] and german.scope == 16
    elsewhere = ask(snapshot, ctx=ctx_for("10.2.0.0", locate, prefix=24))
    assert data(elsewhere) == ["192.0.2.12"]


def test_an_aaaa_query_skips_a_nested_endpoint_whose_child_has_no_ipv6() -> None:
    # availability is judged per family: the IPv4-only child cannot answer AAAA,
    # so the parent must go on to its IPv6 endpoint rather than answer NODATA
    six = make_endpoint("six", "2001:db8::6", priority=2, id=6)
    snapshot = snapshot_of(parent(N_EU, six), EU)
    assert data(ask(snapshot)) == ["192.0.2.11"]
    assert data(ask(snapshot, rtype=RType.AAAA)) == ["2001:db8::6"]


# SRV through nested endpoints: the child's targets, renumbered so that the
# parent's order comes first.


def srv(result: Answer) -> list[tuple[int, int, int, str]]:
    records = sorted(result.answer, key=lambda r: (r.rdata.priority, r.rdata.target))
    return [
        (r.rdata.priority, r.rdata.weight, r.rdata.port, r.rdata.target)
        for r in records
    ]


@pytest.mark.parametrize(
    ("offline", "expected"),
    [
        (
            (),
            [
                (1, 1, 5060, "e1.eu.tm.example."),
                (2, 1, 5060, "e2.eu.tm.example."),
                (3, 1, 5060, "u1.us.tm.example."),
                (4, 1, 5060, "u2.us.tm.example."),
                (5, 1, 5060, "direct.app.tm.example."),
            ],
        ),
        (
            (11, 21),
            [
                (1, 1, 5060, "e2.eu.tm.example."),
                (2, 1, 5060, "u2.us.tm.example."),
                (3, 1, 5060, "direct.app.tm.example."),
            ],
        ),
        (
            (11, 12),  # the eu child is empty, so its nested endpoint is down
            [
                (1, 1, 5060, "u1.us.tm.example."),
                (2, 1, 5060, "u2.us.tm.example."),
                (3, 1, 5060, "direct.app.tm.example."),
            ],
        ),
    ],
)
def test_srv_lists_the_childs_targets_in_the_parents_order(offline, expected):
    snapshot = snapshot_of(
        parent(N_EU, N_US, DIRECT, srv=(SIP,)), EU, US, offline=offline
    )
    result = ask(snapshot, "_sip._udp.app.tm.example.", RType.SRV)
    assert srv(result) == expected


def test_srv_puts_a_direct_endpoint_before_a_later_nested_one() -> None:
    first = replace(DIRECT, priority=1)
    later = replace(N_EU, priority=2)
    snapshot = snapshot_of(parent(first, later, srv=(SIP,)), EU)
    result = ask(snapshot, "_sip._udp.app.tm.example.", RType.SRV)
    assert [(p, t) for p, _, _, t in srv(result)] == [
        (1, "direct.app.tm.example."),
        (2, "e1.eu.tm.example."),
        (3, "e2.eu.tm.example."),
    ]


def test_srv_additional_records_are_the_child_targets_with_the_child_ttl() -> None:
    snapshot = snapshot_of(parent(N_EU, srv=(SIP,)), EU)
    result = ask(snapshot, "_sip._udp.app.tm.example.", RType.SRV)
    assert sorted((r.name, str(r.rdata), r.ttl) for r in result.additional) == [
        ("e1.eu.tm.example.", "192.0.2.11", 30),
        ("e2.eu.tm.example.", "192.0.2.12", 30),
    ]
    assert {r.ttl for r in result.answer} == {60}  # the parent's TTL


def test_srv_through_a_weighted_child_keeps_its_weights_at_one_priority() -> None:
    child = make_profile(
        "eu", Method.WEIGHTED, replace(E1, weight=7), replace(E2, weight=3)
    )
    snapshot = snapshot_of(parent(N_EU, N_US, srv=(SIP,)), child, US)
    result = ask(snapshot, "_sip._udp.app.tm.example.", RType.SRV)
    assert [(p, w, t) for p, w, _, t in srv(result)] == [
        (1, 7, "e1.eu.tm.example."),
        (1, 3, "e2.eu.tm.example."),
        (2, 1, "u1.us.tm.example."),
        (3, 1, "u2.us.tm.example."),
    ]


def test_srv_under_a_weighted_parent_keeps_direct_and_nested_at_one_level() -> None:
    # a weighted parent has no order between its endpoints (DESIGN §3: one
    # priority), so the child's first choice must share the direct endpoint's
    # SRV priority, not be ranked after it
    top = parent(
        replace(DIRECT, weight=1),
        replace(N_EU, weight=1),
        method=Method.WEIGHTED,
        srv=(SIP,),
    )
    snapshot = snapshot_of(top, EU)
    result = ask(snapshot, "_sip._udp.app.tm.example.", RType.SRV)
    by_target = {t.split(".")[0]: p for p, _, _, t in srv(result)}
    assert set(by_target) == {"direct", "e1", "e2"}
    assert by_target["direct"] == by_target["e1"] < by_target["e2"]


def test_explain_says_why_a_nested_endpoint_was_skipped() -> None:
    """In the operator's words: the child is disabled, or has too few up."""
    wanting = replace(N_US, min_child_endpoints=2)
    snapshot = snapshot_of(
        parent(N_EU, wanting), replace(EU, enabled=False), US, offline=(21,)
    )
    trace = ask(snapshot).trace
    assert "endpoint to-eu: disabled, skipped: child profile eu disabled" in trace
    assert (
        "endpoint to-us: offline, skipped: child profile us: 1 of 2 required available"
        in trace
    )


# MinChildEndpointsIPv4 / IPv6 (Azure): a dual-stack child counts as up only
# while enough of its available endpoints answer each family.

V6 = make_endpoint("v6", "2001:db8::31", priority=3, id=31)
DUAL = make_profile("eu", Method.PRIORITY, E1, E2, V6, monitor=TCP, ttl=30)


def test_a_nested_endpoint_needs_its_children_of_each_family() -> None:
    to_dual = nested("to-eu", "eu", 1, 1, min_child_endpoints_ipv6=1)
    healthy = snapshot_of(parent(to_dual, N_US), DUAL, US)
    assert data(ask(healthy)) == ["192.0.2.11"]
    # IPv4 is fine, but the only IPv6 endpoint is down: the child counts as
    # down for the parent, which moves on to us.
    v6_down = snapshot_of(parent(to_dual, N_US), DUAL, US, offline=[31])
    result = ask(v6_down)
    assert data(result) == ["198.51.100.21"]
    assert any(
        "child profile eu: 2 of 1 (IPv6: 0 of 1) required available" in line
        for line in result.trace
    )


def test_an_ipv4_minimum_counts_only_ipv4_children() -> None:
    two_v4 = nested("to-eu", "eu", 1, 1, min_child_endpoints_ipv4=2)
    both = snapshot_of(parent(two_v4, N_US), DUAL, US)
    assert data(ask(both)) == ["192.0.2.11"]
    one_v4 = snapshot_of(parent(two_v4, N_US), DUAL, US, offline=[12])
    assert data(ask(one_v4)) == ["198.51.100.21"]
