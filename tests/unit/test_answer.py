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
    Monitor,
    Override,
    OverrideState,
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
    assert {r.ttl for r in result.answer + result.additional} == {60}


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
