"""all_down policies and address families (docs/behaviour.md): an
AAAA query routes among IPv6 endpoints only; the all_down policy applies when
nothing in the profile is available; while some endpoint is up, a family whose
endpoints are all down (or that has none) is NODATA, so a dual-stack client is
never handed a dead IPv6 address while IPv4 works."""

from __future__ import annotations

from dataclasses import replace
from ipaddress import ip_address
from random import Random

import pytest

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
from app.domain.snapshot import compile_snapshot
from tests.builders import make_endpoint, make_profile, make_zone

TCP = Monitor()
A1 = make_endpoint("a1", "192.0.2.1", priority=1, id=1)
A2 = make_endpoint("a2", "192.0.2.2", priority=2, id=2)
S1 = make_endpoint("s1", "2001:db8::1", priority=3, id=3)
S2 = make_endpoint("s2", "2001:db8::2", priority=4, id=4)
FALLBACK4 = ip_address("192.0.2.99")
FALLBACK6 = ip_address("2001:db8::99")
SIP = SrvService("_sip._udp", 5060)


def ask(
    *endpoints,
    rtype: RType,
    offline=(),
    method: Method = Method.PRIORITY,
    name: str = "app.tm.example.",
    **profile_over,
) -> Answer:
    profile = make_profile("app", method, *endpoints, monitor=TCP, **profile_over)
    health = {i: Health(HealthState.OFFLINE, since=0.0) for i in offline}
    snapshot = compile_snapshot(Config((make_zone(profile),)), health, 1, 0.0)
    return answer(
        snapshot, name, rtype, QueryContext(), RandomDraw(Random(1)), explain=True
    )


def data(result: Answer) -> list[str]:
    return sorted(str(r.rdata) for r in result.answer)


DUAL = (A1, A2, S1, S2)


EVERYTHING = (1, 2, 3, 4)


@pytest.mark.parametrize(
    ("policy", "fallback", "offline", "rtype", "expected"),
    [
        # every IPv6 endpoint down, IPv4 up: AAAA is NODATA whatever the policy
        (AllDown.SERVE_ALL, None, (3, 4), RType.AAAA, []),
        (AllDown.SERVE_ALL, None, (3, 4), RType.A, ["192.0.2.1"]),
        (AllDown.NODATA, None, (3, 4), RType.AAAA, []),
        (AllDown.NODATA, None, (3, 4), RType.A, ["192.0.2.1"]),
        (AllDown.FALLBACK, FALLBACK6, (3, 4), RType.AAAA, []),
        (AllDown.FALLBACK, FALLBACK6, (3, 4), RType.A, ["192.0.2.1"]),
        # every IPv4 endpoint down, IPv6 up: A is NODATA
        (AllDown.SERVE_ALL, None, (1, 2), RType.A, []),
        (AllDown.SERVE_ALL, None, (1, 2), RType.AAAA, ["2001:db8::1"]),
        (AllDown.NODATA, None, (1, 2), RType.A, []),
        (AllDown.FALLBACK, FALLBACK4, (1, 2), RType.A, []),
        (AllDown.FALLBACK, FALLBACK4, (1, 2), RType.AAAA, ["2001:db8::1"]),
        # the whole profile down: the policy decides each family
        (AllDown.SERVE_ALL, None, EVERYTHING, RType.A, ["192.0.2.1"]),
        (AllDown.SERVE_ALL, None, EVERYTHING, RType.AAAA, ["2001:db8::1"]),
        (AllDown.NODATA, None, EVERYTHING, RType.A, []),
        (AllDown.NODATA, None, EVERYTHING, RType.AAAA, []),
        (AllDown.FALLBACK, FALLBACK4, EVERYTHING, RType.A, ["192.0.2.99"]),
        (AllDown.FALLBACK, FALLBACK4, EVERYTHING, RType.AAAA, []),  # other family
        (AllDown.FALLBACK, FALLBACK6, EVERYTHING, RType.AAAA, ["2001:db8::99"]),
        (AllDown.FALLBACK, FALLBACK6, EVERYTHING, RType.A, []),
        # one endpoint of each family still up: no policy needed
        (AllDown.NODATA, None, (1, 3), RType.A, ["192.0.2.2"]),
        (AllDown.FALLBACK, FALLBACK6, (1, 3), RType.AAAA, ["2001:db8::2"]),
    ],
)
def test_the_policy_and_the_families(policy, fallback, offline, rtype, expected):
    result = ask(
        *DUAL, rtype=rtype, offline=offline, all_down=policy, fallback=fallback
    )
    assert result.rcode is Rcode.NOERROR
    assert data(result) == expected
    if not expected:
        assert [r.rtype for r in result.authority] == [RType.SOA]


@pytest.mark.parametrize(
    ("rtype", "expected"),
    [
        (RType.AAAA, ["2001:db8::1", "2001:db8::2"]),
        (RType.A, ["192.0.2.1", "192.0.2.2"]),
    ],
)
def test_serve_all_answers_every_enabled_endpoint_of_the_family(rtype, expected):
    result = ask(
        *DUAL,
        rtype=rtype,
        offline=(1, 2, 3, 4),
        method=Method.MULTIVALUE,
        max_return=10,
    )
    assert data(result) == expected


def test_serve_all_leaves_out_disabled_and_forced_down_endpoints() -> None:
    for rtype, expected in ((RType.AAAA, ["2001:db8::3"]), (RType.A, ["192.0.2.2"])):
        result = ask(
            replace(A1, enabled=False),
            A2,
            replace(S1, enabled=False),
            replace(S2, override=Override(OverrideState.DOWN, "maintenance")),
            make_endpoint("s3", "2001:db8::3", priority=5, id=5),
            rtype=rtype,
            offline=(2, 5),
            method=Method.MULTIVALUE,
            max_return=10,
        )
        assert data(result) == expected


@pytest.mark.parametrize("rtype", [RType.A, RType.AAAA])
def test_serve_all_with_every_endpoint_forced_down_is_nodata(rtype) -> None:
    forced = Override(OverrideState.DOWN, "maintenance")
    result = ask(
        replace(A1, override=forced), replace(S1, override=forced), rtype=rtype
    )
    assert result.rcode is Rcode.NOERROR and result.answer == ()


@pytest.mark.parametrize(
    ("policy", "fallback"),
    [
        (AllDown.SERVE_ALL, None),
        (AllDown.NODATA, None),
        (AllDown.FALLBACK, FALLBACK6),
    ],
)
def test_a_family_with_no_endpoints_at_all_is_nodata(policy, fallback) -> None:
    # every IPv4 endpoint is up, so the AAAA question is not an all-down case:
    # in particular the IPv6 fallback address is not handed out
    result = ask(A1, A2, rtype=RType.AAAA, all_down=policy, fallback=fallback)
    assert result.rcode is Rcode.NOERROR
    assert result.answer == ()


def test_a_host_endpoint_answers_either_family() -> None:
    host = make_endpoint(
        "cdn",
        None,
        kind=EndpointKind.HOST,
        target="edge.cdn.example.",
        id=7,
        priority=2,
    )
    for rtype in (RType.A, RType.AAAA):
        result = ask(A1, host, S1, rtype=rtype, offline=(1,), all_down=AllDown.NODATA)
        assert [(r.rtype, r.rdata) for r in result.answer] == [
            (RType.CNAME, "edge.cdn.example.")
        ]


@pytest.mark.parametrize(
    ("policy", "fallback", "expected"),
    [
        (AllDown.SERVE_ALL, None, 4),
        (AllDown.NODATA, None, 0),
        (AllDown.FALLBACK, FALLBACK4, 0),  # the fallback has no name to point at
    ],
)
def test_srv_when_everything_is_down(policy, fallback, expected) -> None:
    result = ask(
        *DUAL,
        rtype=RType.SRV,
        offline=(1, 2, 3, 4),
        name="_sip._udp.app.tm.example.",
        srv=(SIP,),
        all_down=policy,
        fallback=fallback,
    )
    assert result.rcode is Rcode.NOERROR
    assert len(result.answer) == expected


def test_the_trace_says_which_rule_decided() -> None:
    result = ask(*DUAL, rtype=RType.AAAA, offline=EVERYTHING, all_down=AllDown.NODATA)
    assert any("all_down=nodata" in line for line in result.trace)
    result = ask(*DUAL, rtype=RType.AAAA, offline=(3, 4), all_down=AllDown.NODATA)
    assert not any("all_down" in line for line in result.trace)
    assert any("NODATA" in line for line in result.trace)
    result = ask(*DUAL, rtype=RType.A, offline=(3, 4), all_down=AllDown.NODATA)
    assert not any("all_down" in line for line in result.trace)
