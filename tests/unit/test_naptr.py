"""NAPTR for SIP (RFC 3263) at a profile's name: one record per SIP service
it names, TLS first by default, each pointing to the service's SRV name;
health-aware: a service none of whose endpoints is available is left out.
SRV services served by some endpoints only answer with those."""

from __future__ import annotations

import time
from dataclasses import replace
from random import Random

import dns.message
import dns.rdatatype
import pytest

from app.dns.handler import DnsHandler
from app.domain.answer import Answer, answer
from app.domain.draw import RandomDraw
from app.domain.explain import rdata_text
from app.domain.model import (
    Config,
    Health,
    HealthState,
    Monitor,
    MonitorProtocol,
    Profile,
)
from app.domain.query import QueryContext, Rcode, RType
from app.domain.snapshot import compile_snapshot
from app.domain.validation import Invalid, profile_problems
from app.schemas.profiles import ProfileIn
from tests.builders import make_zone

ZONE = "tm.example."
SIP = {
    "name": "sip",
    "method": "priority",
    "monitor": {"protocol": "tcp", "port": 5060},
    "srv": [
        {"service": "_sip._udp", "port": 5060},
        {"service": "_sip._tcp", "port": 5060},
        {"service": "_sips._tcp", "port": 5061, "endpoints": ["tls"]},
        {"service": "_xmpp._tcp", "port": 5222},
    ],
    "naptr": True,
    "endpoints": [
        {"name": "a", "address": "127.0.0.1"},
        {"name": "b", "address": "127.0.0.2"},
        {"name": "tls", "address": "127.0.0.3"},
    ],
}


def profile(**over: object) -> Profile:
    return ProfileIn.model_validate(SIP | over).to_domain(ZONE)


def stored(p: Profile) -> Profile:
    """As the store gives it back: with ids."""
    endpoints = tuple(replace(e, id=i + 1) for i, e in enumerate(p.endpoints))
    return replace(p, id=1, endpoints=endpoints)


def ask(p: Profile, qname: str, rtype: RType, down: tuple[str, ...] = ()) -> Answer:
    p = stored(p)
    health = {
        e.id: Health(HealthState.OFFLINE if e.name in down else HealthState.ONLINE, 0.0)
        for e in p.endpoints
    }
    shot = compile_snapshot(Config((make_zone(p),)), health, 1, time.time())
    ctx = QueryContext(None, 0, 0.0)
    return answer(shot, qname, rtype, ctx, RandomDraw(Random(1)), explain=True)


def naptrs(result: Answer) -> list[str]:
    return [rdata_text(r) for r in result.answer]


def test_true_publishes_tls_then_tcp_then_udp_for_the_sip_services() -> None:
    result = ask(profile(), "sip.tm.example.", RType.NAPTR)
    assert naptrs(result) == [
        '10 30 "s" "SIP+D2U" "" _sip._udp.sip.tm.example.',
        '10 20 "s" "SIP+D2T" "" _sip._tcp.sip.tm.example.',
        '10 10 "s" "SIPS+D2T" "" _sips._tcp.sip.tm.example.',
    ]
    assert all(r.ttl == 60 for r in result.answer)


def test_a_service_whose_endpoints_are_down_is_left_out() -> None:
    result = ask(profile(), "sip.tm.example.", RType.NAPTR, down=("tls",))
    assert [t.split()[3] for t in naptrs(result)] == ['"SIP+D2U"', '"SIP+D2T"']
    assert any("_sips._tcp: no endpoint available, left out" in t for t in result.trace)
    # Everything down: no NAPTR (NODATA); clients ask the SRV names themselves.
    nothing = ask(profile(), "sip.tm.example.", RType.NAPTR, down=("a", "b", "tls"))
    assert nothing.rcode is Rcode.NOERROR and not nothing.answer


def test_a_service_served_by_some_endpoints_answers_with_those_only() -> None:
    tls = ask(profile(), "_sips._tcp.sip.tm.example.", RType.SRV)
    assert [r.rdata.target for r in tls.answer] == ["tls.sip.tm.example."]
    udp = ask(profile(), "_sip._udp.sip.tm.example.", RType.SRV)
    assert sorted(r.rdata.target for r in udp.answer) == [
        "a.sip.tm.example.",
        "b.sip.tm.example.",
        "tls.sip.tm.example.",
    ]


def test_a_list_sets_order_and_preference_and_names_only_sip_services() -> None:
    listed = profile(naptr=[{"service": "_sip._udp", "order": 5, "preference": 1}])
    assert naptrs(ask(listed, "sip.tm.example.", RType.NAPTR)) == [
        '5 1 "s" "SIP+D2U" "" _sip._udp.sip.tm.example.'
    ]
    for bad, field in (
        ([{"service": "_xmpp._tcp", "preference": 1}], "naptr.0.service"),
        ([{"service": "_sip._tls", "preference": 1}], "naptr.0.service"),
    ):
        with pytest.raises(Invalid) as caught:
            profile(naptr=bad)
        assert [p.field for p in caught.value.problems] == [field]
    with pytest.raises(Invalid, match="give the profile"):
        profile(srv=[{"service": "_xmpp._tcp", "port": 5222}])


def test_a_service_names_endpoints_the_profile_has() -> None:
    p = profile(
        srv=[{"service": "_sip._udp", "port": 5060, "endpoints": ["a", "nope"]}]
    )
    assert [(x.field, x.message) for x in profile_problems(p, ZONE)] == [
        ("srv.0.endpoints.1", "the profile has no endpoint 'nope'")
    ]
    twice = profile(
        srv=[{"service": "_sip._udp", "port": 1}, {"service": "_sip._udp", "port": 2}]
    )
    assert [x.field for x in profile_problems(twice, ZONE)] == ["srv.1.service"]


@pytest.mark.parametrize("fast", [True, False])
def test_the_wire_reply_reads_back_as_naptr(fast: bool) -> None:
    from dataclasses import replace

    p = replace(profile(), monitor=Monitor(protocol=MonitorProtocol.NONE), id=1)
    p = replace(
        p, endpoints=tuple(replace(e, id=i + 1) for i, e in enumerate(p.endpoints))
    )
    shot = compile_snapshot(Config((make_zone(p),)), {}, 1, time.time())
    handle = DnsHandler(lambda: shot, Random(1), time.time, lambda _: None, fast)
    wire = dns.message.make_query("sip.tm.example.", "NAPTR").to_wire()
    for _ in range(2):
        reply = handle(wire, ("127.0.0.1", 5300), True)
        assert reply is not None
        parsed = dns.message.from_wire(reply)
        [rrset] = parsed.answer
        assert rrset.rdtype == dns.rdatatype.NAPTR
        assert sorted(r.to_text() for r in rrset) == [
            '10 10 "s" "SIPS+D2T" "" _sips._tcp.sip.tm.example.',
            '10 20 "s" "SIP+D2T" "" _sip._tcp.sip.tm.example.',
            '10 30 "s" "SIP+D2U" "" _sip._udp.sip.tm.example.',
        ]
