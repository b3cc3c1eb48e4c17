"""The resolution path, end to end in memory: rcodes, records, policies."""

from collections.abc import Mapping
from dataclasses import replace
from ipaddress import ip_address
from random import Random

from app.domain.answer import Answer, answer
from app.domain.draw import RandomDraw
from app.domain.model import (
    AllDown,
    Config,
    EndpointKind,
    Health,
    HealthState,
    Method,
    MinAvailable,
    Monitor,
    Override,
    OverrideState,
    Profile,
    SrvService,
)
from app.domain.query import QueryContext, Rcode, RType
from app.domain.records import Soa
from app.domain.snapshot import Snapshot, compile_snapshot
from tests.builders import make_endpoint, make_profile, make_zone

TCP = Monitor()
PRIMARY = make_endpoint("primary", "127.0.0.1", priority=1, id=1)
SECONDARY = make_endpoint("secondary", "127.0.0.2", priority=2, id=2)
V6 = make_endpoint("six", "::1", priority=3, id=3)


def snapshot_of(
    *profiles, health: Mapping[int, Health] | None = None, **zone
) -> Snapshot:
    return compile_snapshot(
        Config((make_zone(*profiles, **zone),)), health or {}, 7, 0.0
    )


def ask(snapshot: Snapshot, name: str, rtype: RType = RType.A) -> Answer:
    return answer(
        snapshot, name, rtype, QueryContext(), RandomDraw(Random(1)), explain=True
    )


def down(*ids: int) -> dict[int, Health]:
    return {i: Health(HealthState.OFFLINE, since=0.0) for i in ids}


def addresses(result: Answer) -> list[str]:
    return [str(r.rdata) for r in result.answer]


def test_priority_profile_answers_its_primary_with_the_profile_ttl() -> None:
    result = ask(
        snapshot_of(make_profile("app", Method.PRIORITY, PRIMARY, SECONDARY)),
        "app.tm.example.",
    )
    assert result.rcode is Rcode.NOERROR and result.authoritative
    assert addresses(result) == ["127.0.0.1"]
    assert result.answer[0].ttl == 60


def test_offline_primary_fails_over_to_the_secondary() -> None:
    profile = make_profile("app", Method.PRIORITY, PRIMARY, SECONDARY, monitor=TCP)
    assert addresses(ask(snapshot_of(profile, health=down(1)), "app.tm.example.")) == [
        "127.0.0.2"
    ]


def test_checking_endpoints_are_served() -> None:
    profile = make_profile("app", Method.PRIORITY, PRIMARY, SECONDARY, monitor=TCP)
    snapshot = snapshot_of(profile)
    assert snapshot.nodes["app.tm.example."].profile.states[1] is HealthState.CHECKING
    assert addresses(ask(snapshot, "app.tm.example.")) == ["127.0.0.1"]


def test_a_disabled_endpoint_is_skipped() -> None:
    disabled = replace(PRIMARY, enabled=False)
    profile = make_profile("app", Method.PRIORITY, disabled, SECONDARY)
    assert addresses(ask(snapshot_of(profile), "app.tm.example.")) == ["127.0.0.2"]


def test_all_down_serve_all_treats_every_enabled_endpoint_as_available() -> None:
    profile = make_profile("app", Method.PRIORITY, PRIMARY, SECONDARY, monitor=TCP)
    result = ask(snapshot_of(profile, health=down(1, 2)), "app.tm.example.")
    assert addresses(result) == ["127.0.0.1"]
    assert any("all_down=serve_all" in line for line in result.trace)


def test_all_down_nodata_answers_nodata_with_the_soa() -> None:
    profile = make_profile(
        "app", Method.PRIORITY, PRIMARY, SECONDARY, monitor=TCP, all_down=AllDown.NODATA
    )
    result = ask(snapshot_of(profile, health=down(1, 2)), "app.tm.example.")
    assert result.rcode is Rcode.NOERROR and result.answer == ()
    assert result.authority[0].rtype is RType.SOA


def test_all_down_fallback_answers_the_fixed_address() -> None:
    profile = make_profile(
        "app",
        Method.PRIORITY,
        PRIMARY,
        monitor=TCP,
        all_down=AllDown.FALLBACK,
        fallback=ip_address("127.0.0.99"),
    )
    assert addresses(ask(snapshot_of(profile, health=down(1)), "app.tm.example.")) == [
        "127.0.0.99"
    ]


def test_serve_all_still_honours_a_forced_down_endpoint() -> None:
    forced = replace(PRIMARY, override=Override(OverrideState.DOWN, "maintenance"))
    profile = make_profile("app", Method.PRIORITY, forced, SECONDARY, monitor=TCP)
    assert addresses(ask(snapshot_of(profile, health=down(2)), "app.tm.example.")) == [
        "127.0.0.2"
    ]


def test_aaaa_answers_only_ipv6_endpoints() -> None:
    profile = make_profile("app", Method.PRIORITY, PRIMARY, V6)
    assert addresses(ask(snapshot_of(profile), "app.tm.example.", RType.AAAA)) == [
        "::1"
    ]


def test_aaaa_without_ipv6_endpoints_is_nodata() -> None:
    result = ask(
        snapshot_of(make_profile("app", Method.PRIORITY, PRIMARY)),
        "app.tm.example.",
        RType.AAAA,
    )
    assert result.rcode is Rcode.NOERROR and result.answer == ()
    assert result.authority[0].rtype is RType.SOA


def test_a_host_endpoint_is_answered_as_a_cname() -> None:
    host = make_endpoint(
        "cdn", None, kind=EndpointKind.HOST, target="edge.cdn.example.", id=9
    )
    result = ask(
        snapshot_of(make_profile("app", Method.PRIORITY, host)), "app.tm.example."
    )
    assert [(r.rtype, r.rdata) for r in result.answer] == [
        (RType.CNAME, "edge.cdn.example.")
    ]


def test_apex_answers_soa_and_ns_and_the_serial_is_the_generation() -> None:
    snapshot = snapshot_of()
    soa = ask(snapshot, "tm.example.", RType.SOA).answer[0]
    assert isinstance(soa.rdata, Soa) and soa.rdata.serial == 7
    assert soa.rdata.rname == "hostmaster.tm.example."
    ns = ask(snapshot, "tm.example.", RType.NS).answer
    assert [r.rdata for r in ns] == ["ns1.tm.example."]


def test_unknown_name_is_nxdomain_with_the_negative_ttl_soa() -> None:
    result = ask(snapshot_of(negative_ttl=30), "nope.tm.example.")
    assert result.rcode is Rcode.NXDOMAIN
    assert [r.rtype for r in result.authority] == [RType.SOA]
    assert result.authority[0].ttl == 30


def test_names_outside_every_zone_are_refused_even_with_a_shared_suffix() -> None:
    snapshot = snapshot_of()
    for name in ("example.com.", "xtm.example.", "example."):
        result = ask(snapshot, name)
        assert result.rcode is Rcode.REFUSED and not result.authoritative


def test_each_address_endpoint_has_its_own_name() -> None:
    snapshot = snapshot_of(make_profile("app", Method.PRIORITY, PRIMARY, V6))
    assert addresses(ask(snapshot, "primary.app.tm.example.")) == ["127.0.0.1"]
    assert addresses(ask(snapshot, "six.app.tm.example.", RType.AAAA)) == ["::1"]
    assert ask(snapshot, "six.app.tm.example.").answer == ()


def test_a_disabled_profile_does_not_answer() -> None:
    profile = make_profile("app", Method.PRIORITY, PRIMARY, enabled=False)
    assert ask(snapshot_of(profile), "app.tm.example.").rcode is Rcode.NXDOMAIN


def test_a_profile_at_the_apex_answers_next_to_soa_and_ns() -> None:
    snapshot = snapshot_of(make_profile("@", Method.PRIORITY, PRIMARY))
    assert addresses(ask(snapshot, "tm.example.")) == ["127.0.0.1"]
    assert ask(snapshot, "tm.example.", RType.SOA).answer[0].rtype is RType.SOA


SIP = SrvService("_sip._udp", 5060)


def test_srv_for_priority_lists_every_available_endpoint_in_priority_order() -> None:
    profile = make_profile(
        "app", Method.PRIORITY, SECONDARY, PRIMARY, V6, srv=(SIP,), monitor=TCP
    )
    result = ask(
        snapshot_of(profile, health=down(2)), "_sip._udp.app.tm.example.", RType.SRV
    )
    srvs = [r.rdata for r in result.answer]
    assert [(s.priority, s.port, s.target) for s in srvs] == [
        (1, 5060, "primary.app.tm.example."),
        (3, 5060, "six.app.tm.example."),
    ]
    assert [(r.name, str(r.rdata)) for r in result.additional] == [
        ("primary.app.tm.example.", "127.0.0.1"),
        ("six.app.tm.example.", "::1"),
    ]
    # One endpoint is down: the SRV set is degraded and carries half the TTL,
    # so resolvers ask again sooner; the targets' own addresses do not change.
    assert {r.ttl for r in result.answer} == {30}
    assert {r.ttl for r in result.additional} == {60}


def test_srv_for_weighted_shares_one_priority_and_carries_weights() -> None:
    profile = make_profile(
        "web",
        Method.WEIGHTED,
        replace(PRIMARY, weight=3),
        replace(SECONDARY, weight=1),
        srv=(SIP,),
    )
    srvs = [
        r.rdata
        for r in ask(
            snapshot_of(profile), "_sip._udp.web.tm.example.", RType.SRV
        ).answer
    ]
    assert {s.priority for s in srvs} == {10}
    assert sorted(s.weight for s in srvs) == [1, 3]


def test_an_endpoint_port_overrides_the_service_port() -> None:
    profile = make_profile(
        "app", Method.PRIORITY, replace(PRIMARY, port=5080), srv=(SIP,)
    )
    [record] = ask(snapshot_of(profile), "_sip._udp.app.tm.example.", RType.SRV).answer
    assert record.rdata.port == 5080


def test_srv_all_down_serve_all_still_offers_every_enabled_endpoint() -> None:
    profile = make_profile(
        "app", Method.PRIORITY, PRIMARY, SECONDARY, srv=(SIP,), monitor=TCP
    )
    result = ask(
        snapshot_of(profile, health=down(1, 2)), "_sip._udp.app.tm.example.", RType.SRV
    )
    assert len(result.answer) == 2


def test_srv_all_down_nodata_is_nodata() -> None:
    profile = make_profile(
        "app",
        Method.PRIORITY,
        PRIMARY,
        srv=(SIP,),
        monitor=TCP,
        all_down=AllDown.NODATA,
    )
    result = ask(
        snapshot_of(profile, health=down(1)), "_sip._udp.app.tm.example.", RType.SRV
    )
    assert result.rcode is Rcode.NOERROR and result.answer == ()


def test_a_host_endpoint_is_an_srv_target_by_its_own_name() -> None:
    host = make_endpoint(
        "cdn", None, kind=EndpointKind.HOST, target="sbc.carrier.example.", id=9
    )
    result = ask(
        snapshot_of(make_profile("app", Method.PRIORITY, host, srv=(SIP,))),
        "_sip._udp.app.tm.example.",
        RType.SRV,
    )
    assert result.answer[0].rdata.target == "sbc.carrier.example."
    assert result.additional == ()  # not in the zone: the resolver looks it up


def test_empty_non_terminals_are_nodata_not_nxdomain() -> None:
    snapshot = snapshot_of(make_profile("app", Method.PRIORITY, PRIMARY, srv=(SIP,)))
    result = ask(snapshot, "_udp.app.tm.example.")
    assert result.rcode is Rcode.NOERROR and result.answer == ()
    assert result.authority[0].rtype is RType.SOA
    assert ask(snapshot, "_tcp.app.tm.example.").rcode is Rcode.NXDOMAIN
    assert ask(snapshot, "x._udp.app.tm.example.").rcode is Rcode.NXDOMAIN


def test_any_gets_the_rfc8482_minimal_answer() -> None:
    snapshot = snapshot_of(make_profile("app", Method.PRIORITY, PRIMARY))
    [record] = ask(snapshot, "app.tm.example.", RType.ANY).answer
    assert record.rtype is RType.HINFO and record.rdata.cpu == "RFC8482"
    assert ask(snapshot, "nope.tm.example.", RType.ANY).rcode is Rcode.NXDOMAIN


def test_ns_answer_carries_glue_and_the_ns_name_answers_directly() -> None:
    snapshot = snapshot_of(glue=(("ns1.tm.example.", ip_address("127.0.0.53")),))
    result = ask(snapshot, "tm.example.", RType.NS)
    assert [(r.name, str(r.rdata)) for r in result.additional] == [
        ("ns1.tm.example.", "127.0.0.53")
    ]
    assert addresses(ask(snapshot, "ns1.tm.example.")) == ["127.0.0.53"]


def test_ecs_scope_is_capped_by_what_the_client_sent() -> None:
    snapshot = snapshot_of(make_profile("app", Method.PRIORITY, PRIMARY))
    result = answer(
        snapshot,
        "app.tm.example.",
        RType.A,
        QueryContext(ip_address("127.0.0.1"), 24),
        RandomDraw(Random(1)),
    )
    assert result.scope == 0  # priority answers do not depend on the client


def test_explain_gives_the_probers_reason_for_an_offline_endpoint() -> None:
    """An operator asking why an endpoint was skipped sees what the prober last
    said about it, not just its state."""
    health = {1: Health(HealthState.OFFLINE, since=0.0, reason="connection refused")}
    profile = make_profile("app", Method.PRIORITY, PRIMARY, SECONDARY, monitor=TCP)
    result = ask(snapshot_of(profile, health=health), "app.tm.example.")
    assert addresses(result) == ["127.0.0.2"]
    assert (
        "endpoint primary: offline (connection refused), "
        "skipped: not available (offline)"
    ) in result.trace
    assert "endpoint secondary: checking" in result.trace  # no reason, none shown


def test_a_host_endpoint_without_a_target_answers_nodata_not_an_error() -> None:
    """Validation refuses a host endpoint without a target, but the compiler
    does not check it again: if one is chosen anyway, the name is NODATA (no
    CNAME, no address), never a failed query."""
    hostless = make_endpoint("cdn", None, kind=EndpointKind.HOST, id=9)
    result = ask(
        snapshot_of(make_profile("app", Method.PRIORITY, hostless)), "app.tm.example."
    )
    assert result.rcode is Rcode.NOERROR and result.answer == ()
    assert [r.rtype for r in result.authority] == [RType.SOA]


# Nested endpoints whose child profile is not in the snapshot (disabled, or
# quarantined): the parent has nothing to expand them into.

EU_ONE = make_endpoint("eu-one", "192.0.2.11", id=11)
EU = make_profile("eu", Method.PRIORITY, EU_ONE, enabled=False)
TO_EU = make_endpoint(
    "to-eu", None, kind=EndpointKind.NESTED, child="eu", priority=1, id=21
)
DIRECT = make_endpoint("direct", "203.0.113.3", priority=2, id=22)


def test_a_nested_endpoint_with_a_disabled_child_gives_no_address_under_serve_all() -> (
    None
):
    """serve_all fails open only to endpoints that could answer: a nested
    endpoint whose child profile is disabled has no address to give, so it is
    never a candidate. Alone in its profile it makes the name NODATA (with the
    SOA), for A, AAAA and SRV alike; next to a down direct endpoint, fail-open
    serves the direct one. explain says why."""
    alone = snapshot_of(make_profile("app", Method.PRIORITY, TO_EU, srv=(SIP,)), EU)
    for name, rtype in [
        ("app.tm.example.", RType.A),
        ("app.tm.example.", RType.AAAA),
        ("_sip._udp.app.tm.example.", RType.SRV),
    ]:
        result = ask(alone, name, rtype)
        assert result.rcode is Rcode.NOERROR and result.answer == ()
        assert [r.rtype for r in result.authority] == [RType.SOA]
        assert "endpoint to-eu: disabled, skipped: child profile eu disabled" in (
            result.trace
        )
        assert "nothing available: all_down=serve_all" in result.trace
    with_direct = make_profile("app", Method.PRIORITY, TO_EU, DIRECT, monitor=TCP)
    result = ask(snapshot_of(with_direct, EU, health=down(22)), "app.tm.example.")
    assert addresses(result) == ["203.0.113.3"]


def test_srv_skips_a_forced_up_nested_endpoint_whose_child_is_disabled() -> None:
    """An operator override 'up' cannot give a nested endpoint a child profile
    that is not there: SRV should list the other targets, as A does."""
    forced = replace(TO_EU, override=Override(OverrideState.UP, "pinned"))
    snapshot = snapshot_of(
        make_profile("app", Method.PRIORITY, forced, DIRECT, srv=(SIP,)), EU
    )
    assert addresses(ask(snapshot, "app.tm.example.")) == ["203.0.113.3"]
    result = ask(snapshot, "_sip._udp.app.tm.example.", RType.SRV)
    assert [r.rdata.target for r in result.answer] == ["direct.app.tm.example."]


def test_a_forced_up_nested_endpoint_without_a_child_leaves_it_to_the_fallback() -> (
    None
):
    """With every real endpoint down, the all-down policy decides, whatever an
    override says about a nested endpoint that has no child to answer with."""
    forced = replace(TO_EU, override=Override(OverrideState.UP, "pinned"))
    profile = replace(
        make_profile("app", Method.PRIORITY, forced, DIRECT, monitor=TCP),
        all_down=AllDown.FALLBACK,
        fallback=ip_address("198.51.100.9"),
    )
    result = ask(snapshot_of(profile, EU, health=down(22)), "app.tm.example.")
    assert addresses(result) == ["198.51.100.9"]


def test_srv_keeps_the_operators_priorities_when_no_nested_endpoint_is_chosen() -> None:
    """Child targets are renumbered to fit between the parent's endpoints; when
    the child is down and only direct endpoints are offered, the SRV priorities
    are the ones the operator configured."""
    child = make_profile("eu", Method.PRIORITY, EU_ONE, monitor=TCP)
    later = replace(DIRECT, priority=3)
    last = make_endpoint("last", "203.0.113.5", priority=5, id=23)
    profile = make_profile("app", Method.PRIORITY, TO_EU, later, last, srv=(SIP,))
    name = "_sip._udp.app.tm.example."
    healthy = ask(snapshot_of(profile, child), name, RType.SRV)
    assert [(r.rdata.priority, r.rdata.target) for r in healthy.answer] == [
        (1, "eu-one.eu.tm.example."),
        (2, "direct.app.tm.example."),
        (3, "last.app.tm.example."),
    ]
    child_down = ask(snapshot_of(profile, child, health=down(11)), name, RType.SRV)
    assert [(r.rdata.priority, r.rdata.target) for r in child_down.answer] == [
        (3, "direct.app.tm.example."),
        (5, "last.app.tm.example."),
    ]


def test_a_name_without_the_type_asked_answers_nodata() -> None:
    """A name that exists but holds other data is NODATA with the SOA, never
    NXDOMAIN: A at a bare apex or at an SRV name, SRV or TXT at an endpoint's
    own name."""
    snapshot = snapshot_of(make_profile("app", Method.PRIORITY, PRIMARY, srv=(SIP,)))
    for name, rtype in [
        ("tm.example.", RType.A),
        ("_sip._udp.app.tm.example.", RType.A),
        ("primary.app.tm.example.", RType.SRV),
        ("primary.app.tm.example.", 16),  # TXT
    ]:
        result = ask(snapshot, name, rtype)
        assert result.rcode is Rcode.NOERROR and result.answer == (), (name, rtype)
        assert [r.rtype for r in result.authority] == [RType.SOA]


# Degraded TTL: while an enabled endpoint is unavailable the profile's answers
# carry its ttl_degraded (default half the TTL, as gdnsd), so resolvers come
# back sooner once it recovers.


def test_a_degraded_profile_answers_with_half_its_ttl_by_default() -> None:
    profile = make_profile("app", Method.PRIORITY, PRIMARY, SECONDARY, monitor=TCP)
    healthy = ask(snapshot_of(profile), "app.tm.example.")
    assert [r.ttl for r in healthy.answer] == [60]
    degraded = ask(snapshot_of(profile, health=down(2)), "app.tm.example.")
    assert [(str(r.rdata), r.ttl) for r in degraded.answer] == [("127.0.0.1", 30)]


def test_ttl_degraded_is_the_operators_choice_and_rounds_up_by_default() -> None:
    chosen = replace(
        make_profile("app", Method.PRIORITY, PRIMARY, SECONDARY, monitor=TCP),
        ttl_degraded=5,
    )
    result = ask(snapshot_of(chosen, health=down(1)), "app.tm.example.")
    assert [(str(r.rdata), r.ttl) for r in result.answer] == [("127.0.0.2", 5)]
    odd = replace(chosen, ttl=7, ttl_degraded=None)
    assert [
        r.ttl for r in ask(snapshot_of(odd, health=down(1)), "app.tm.example.").answer
    ] == [4]


def test_disabled_endpoints_do_not_degrade_a_profile() -> None:
    """Disabling is configuration, not a failure: nothing will recover."""
    profile = make_profile(
        "app", Method.PRIORITY, PRIMARY, replace(SECONDARY, enabled=False), monitor=TCP
    )
    assert [r.ttl for r in ask(snapshot_of(profile), "app.tm.example.").answer] == [60]


def test_a_degraded_nested_profile_degrades_its_parent_and_explain_says_so() -> None:
    child = make_profile(
        "eu",
        Method.PRIORITY,
        EU_ONE,
        make_endpoint("eu-two", "192.0.2.12", priority=2, id=12),
        monitor=TCP,
    )
    parent = make_profile("app", Method.PRIORITY, TO_EU, DIRECT, monitor=TCP)
    result = ask(snapshot_of(parent, child, health=down(12)), "app.tm.example.")
    assert [(str(r.rdata), r.ttl) for r in result.answer] == [("192.0.2.11", 30)]
    assert "degraded (an endpoint is unavailable): TTL 30, not 60" in result.trace


# min_available (gdnsd's up_thresh): below it the profile answers as all_down
# says, so the survivors are not handed every client.

POOL = tuple(
    make_endpoint(f"p{i}", f"127.0.8.{i}", priority=i, id=80 + i) for i in range(1, 5)
)


def pool(**over: object) -> Profile:
    return replace(
        make_profile("pool", Method.MULTIVALUE, *POOL, monitor=TCP, max_return=4),
        **over,
    )


def test_below_min_available_serve_all_answers_every_enabled_endpoint() -> None:
    one_up = down(82, 83, 84)
    healthy_enough = ask(
        snapshot_of(pool(min_available=MinAvailable(count=1)), health=one_up),
        "pool.tm.example.",
    )
    assert addresses(healthy_enough) == ["127.0.8.1"]
    below = ask(
        snapshot_of(pool(min_available=MinAvailable(count=2)), health=one_up),
        "pool.tm.example.",
    )
    assert sorted(addresses(below)) == [f"127.0.8.{i}" for i in range(1, 5)]
    assert "1 of 4 available, below min_available 2: as if none were" in below.trace


def test_min_available_as_a_share_rounds_up() -> None:
    """50 % of 4 is 2: two up is enough; 75 % of 4 is 3: two up is not."""
    two_up = down(83, 84)
    half = ask(
        snapshot_of(pool(min_available=MinAvailable(percent=50)), health=two_up),
        "pool.tm.example.",
    )
    assert sorted(addresses(half)) == ["127.0.8.1", "127.0.8.2"]
    most = ask(
        snapshot_of(pool(min_available=MinAvailable(percent=75)), health=two_up),
        "pool.tm.example.",
    )
    assert len(addresses(most)) == 4
    assert MinAvailable(percent=34).of(4) == 2 and MinAvailable(count=3).of(1) == 3


def test_below_min_available_follows_nodata_and_fallback() -> None:
    one_up = down(82, 83, 84)
    nodata = pool(min_available=MinAvailable(count=2), all_down=AllDown.NODATA)
    result = ask(snapshot_of(nodata, health=one_up), "pool.tm.example.")
    assert result.rcode is Rcode.NOERROR and result.answer == ()
    fallback = replace(
        nodata, all_down=AllDown.FALLBACK, fallback=ip_address("198.51.100.7")
    )
    assert addresses(ask(snapshot_of(fallback, health=one_up), "pool.tm.example.")) == [
        "198.51.100.7"
    ]
    # The fallback is of one family: AAAA below the minimum is NODATA.
    aaaa = ask(snapshot_of(fallback, health=one_up), "pool.tm.example.", RType.AAAA)
    assert aaaa.answer == ()


def test_min_available_reads_and_writes_as_the_operator_wrote_it() -> None:
    assert MinAvailable.parse("2") == MinAvailable(count=2)
    assert MinAvailable.parse("50%") == MinAvailable(percent=50)
    assert [str(MinAvailable(count=2)), str(MinAvailable(percent=50))] == ["2", "50%"]
