from dataclasses import replace
from ipaddress import ip_address

import pytest

from app.domain.model import (
    AllDown,
    EndpointKind,
    HttpMethod,
    Method,
    Monitor,
    MonitorProtocol,
    Profile,
    SrvService,
)
from app.domain.validation import (
    Invalid,
    Problem,
    glue_neighbour_names,
    header_problems,
    neighbour_names,
    profile_problems,
    zone_problems,
)
from tests.builders import make_endpoint, make_profile, make_zone

A = make_endpoint("a", "127.0.0.1", priority=1)
B = make_endpoint("b", "127.0.0.2", priority=2)


def fields(problems) -> list[str]:
    return [p.field for p in problems]


def test_a_valid_profile_has_no_problems() -> None:
    assert profile_problems(make_profile("app", Method.PRIORITY, A, B)) == []


def test_a_repeated_priority_is_reported_on_every_endpoint_holding_it() -> None:
    """So a change to either endpoint is told about its own field."""
    problems = profile_problems(
        make_profile("app", Method.PRIORITY, A, replace(B, priority=1))
    )
    assert fields(problems) == ["endpoints.0.priority", "endpoints.1.priority"]
    assert all("'a' and 'b'" in p.message for p in problems)


def test_a_repeated_name_is_reported_on_both_endpoints() -> None:
    problems = profile_problems(
        make_profile("app", Method.PRIORITY, A, replace(B, name="a"))
    )
    assert fields(problems) == ["endpoints.0.name", "endpoints.1.name"]


def test_an_endpoint_name_colliding_with_a_profile_name_is_refused() -> None:
    zone = make_zone(
        make_profile("app", Method.PRIORITY, A),
        make_profile("a.app", Method.PRIORITY, B),
    )
    [problem] = zone_problems(zone)
    assert "a.app.tm.example." in problem.message


def test_a_host_endpoint_at_the_apex_is_refused() -> None:
    host = make_endpoint("cdn", None, kind=EndpointKind.HOST, target="edge.example.")
    assert fields(profile_problems(make_profile("@", Method.PRIORITY, host))) == [
        "endpoints.0.kind"
    ]


def test_a_geo_code_held_twice_names_both_endpoints() -> None:
    profile = make_profile(
        "geo",
        Method.GEOGRAPHIC,
        replace(A, geo=("DE", "WORLD")),
        replace(B, geo=("DE",)),
    )
    problems = profile_problems(profile)
    assert fields(problems) == ["endpoints.0.geo", "endpoints.1.geo"]
    assert all("'a' and 'b'" in p.message for p in problems)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("10.0.0.0/8", "10.1.0.0/16"),
        ("10.0.0.0-10.0.0.9", "10.0.0.8/29"),
        ("2001:db8::/32", "2001:db8:1::/48"),
    ],
)
def test_overlapping_ranges_name_both_endpoints(first: str, second: str) -> None:
    profile = make_profile(
        "net",
        Method.SUBNET,
        replace(A, subnets=(first,)),
        replace(B, subnets=(second,)),
    )
    [problem] = profile_problems(profile)
    assert problem.field == "endpoints.1.subnets.0"
    assert "'a'" in problem.message and "'b'" in problem.message


@pytest.mark.parametrize(
    "bad", ["10.0.0.1/8", "10.0.0.9-10.0.0.1", "10.0.0.1-::1", "x"]
)
def test_unusable_ranges_are_refused(bad: str) -> None:
    profile = make_profile("net", Method.SUBNET, replace(A, subnets=(bad,)))
    assert fields(profile_problems(profile)) == ["endpoints.0.subnets.0"]


def test_multivalue_takes_only_address_endpoints() -> None:
    host = make_endpoint("cdn", None, kind=EndpointKind.HOST, target="x.example.")
    assert fields(profile_problems(make_profile("mv", Method.MULTIVALUE, host))) == [
        "endpoints.0.kind"
    ]


def nest(name: str, *children: str) -> Profile:
    return make_profile(
        name,
        Method.PRIORITY,
        *(
            make_endpoint(
                f"n{i}", None, kind=EndpointKind.NESTED, child=c, priority=i + 1
            )
            for i, c in enumerate(children)
        ),
    )


def test_nesting_a_missing_profile_is_refused() -> None:
    [problem] = zone_problems(make_zone(nest("top", "nowhere")))
    assert problem.field == "child" and "'nowhere'" in problem.message


def test_a_nesting_cycle_is_refused_and_shown() -> None:
    problems = zone_problems(make_zone(nest("a", "b"), nest("b", "c"), nest("c", "a")))
    assert problems and all("cycle" in p.message for p in problems)
    assert "a → b → c → a" in problems[0].message


def test_ten_levels_of_nesting_are_allowed_eleven_are_not() -> None:
    chain = [nest(f"p{i}", f"p{i + 1}") for i in range(10)]
    leaf = make_profile("p10", Method.PRIORITY, A)
    assert zone_problems(make_zone(*chain, leaf)) == []
    deeper = [nest(f"p{i}", f"p{i + 1}") for i in range(11)]
    leaf11 = make_profile("p11", Method.PRIORITY, A)
    assert any("deep" in p.message for p in zone_problems(make_zone(*deeper, leaf11)))


def test_a_profile_cannot_nest_itself() -> None:
    assert "endpoints.0.child" in fields(profile_problems(nest("loop", "loop")))


def test_invalid_names_every_problem_and_can_speak_for_one_endpoint() -> None:
    """The API error lists each field with its message; an endpoint resource
    reports its own fields (`priority`), not the profile's path to them."""
    problems = [
        Problem("endpoints.2.priority", "priority 1 is used by more than one"),
        Problem("endpoints.2.address", "an address endpoint needs an address"),
    ]
    error = Invalid(problems)
    assert str(error) == (
        "endpoints.2.priority: priority 1 is used by more than one; "
        "endpoints.2.address: an address endpoint needs an address"
    )
    assert error.problems == tuple(problems)
    assert fields(error.within("endpoints.2.").problems) == ["priority", "address"]
    single = Invalid.one("name", "a zone cannot be renamed")
    assert single.problems == (Problem("name", "a zone cannot be renamed"),)
    assert str(single) == "name: a zone cannot be renamed"


@pytest.mark.parametrize(
    ("endpoint", "field", "message"),
    [
        (
            make_endpoint("a", None),
            "endpoints.0.address",
            "an address endpoint needs an address",
        ),
        (
            make_endpoint("cdn", None, kind=EndpointKind.HOST),
            "endpoints.0.target",
            "a host endpoint needs a target",
        ),
        (
            make_endpoint("to-eu", None, kind=EndpointKind.NESTED),
            "endpoints.0.child",
            "a nested endpoint needs a child profile",
        ),
    ],
    ids=["address", "host", "nested"],
)
def test_each_endpoint_kind_needs_its_own_field(endpoint, field, message) -> None:
    """An endpoint without what its kind answers with is refused on that field."""
    [problem] = profile_problems(make_profile("app", Method.PRIORITY, endpoint))
    assert (problem.field, problem.message) == (field, message)


def test_all_down_fallback_needs_a_fallback_address() -> None:
    """The policy would have nothing to serve when every endpoint is down."""
    profile = make_profile("app", Method.PRIORITY, A, all_down=AllDown.FALLBACK)
    [problem] = profile_problems(profile)
    assert problem.field == "fallback" and "'fallback' address" in problem.message
    fixed = replace(profile, fallback=ip_address("192.0.2.99"))
    assert profile_problems(fixed) == []


def test_a_probe_must_time_out_before_the_next_one_is_due() -> None:
    """On the profile's monitor and on an endpoint's own, the field named is
    the timeout, and the message gives both values."""
    slow = Monitor(interval=10.0, timeout=10.0)
    profile = make_profile(
        "app", Method.PRIORITY, replace(A, monitor=slow), B, monitor=slow
    )
    problems = profile_problems(profile)
    assert fields(problems) == ["monitor.timeout", "endpoints.0.monitor.timeout"]
    assert problems[0].message == "timeout (10.0 s) must be below interval (10.0 s)"


def test_a_body_can_only_be_matched_where_there_is_one() -> None:
    """body_contains needs an http(s) GET: on TCP or SIP, or with HEAD, the
    probe would never see a body, and the endpoint would look down forever."""
    http = Monitor(protocol=MonitorProtocol.HTTP, body_contains="healthy")
    assert profile_problems(make_profile("app", Method.PRIORITY, A, monitor=http)) == []
    for monitor, words in [
        (replace(http, protocol=MonitorProtocol.TCP), "not tcp"),
        (replace(http, protocol=MonitorProtocol.SIP_UDP), "not sip-udp"),
        (replace(http, method=HttpMethod.HEAD), "HEAD request gets no body"),
    ]:
        profile = make_profile("app", Method.PRIORITY, A, monitor=monitor)
        [problem] = profile_problems(profile)
        assert problem.field == "monitor.body_contains" and words in problem.message


def test_a_degraded_ttl_may_not_exceed_the_ttl() -> None:
    """It exists to bring resolvers back sooner; a longer one is a mistake."""
    profile = replace(make_profile("app", Method.PRIORITY, A), ttl=60, ttl_degraded=61)
    [problem] = profile_problems(profile)
    assert problem.field == "ttl_degraded"
    assert problem.message.startswith("ttl_degraded (61) must not exceed ttl (60)")
    assert profile_problems(replace(profile, ttl_degraded=60)) == []


def test_a_composite_monitor_requires_no_more_than_it_has_and_checks_probe() -> None:
    sip = Monitor(protocol=MonitorProtocol.SIP_TLS)
    http = Monitor(protocol=MonitorProtocol.HTTP, body_contains="ok")
    fine = Monitor(checks=(sip, http), require=2)
    assert profile_problems(make_profile("app", Method.PRIORITY, A, monitor=fine)) == []
    wrong = Monitor(
        checks=(
            Monitor(protocol=MonitorProtocol.NONE),
            replace(http, method=HttpMethod.HEAD),
            replace(sip, checks=(sip,)),
        ),
        require=4,
    )
    problems = profile_problems(make_profile("app", Method.PRIORITY, A, monitor=wrong))
    assert fields(problems) == [
        "monitor.require",
        "monitor.checks.0.protocol",
        "monitor.checks.1.body_contains",
        "monitor.checks.2.checks",
    ]
    assert problems[0].message == "requires 4 of 3 checks"


def test_every_name_a_profile_owns_must_fit_in_dns() -> None:
    """Checked with the zone: the profile's name, its SRV names and its
    endpoints' names, each reported on its own field."""
    zone = ".".join(["z" * 60] * 3) + "."  # 183 octets
    fits = make_profile("app", Method.PRIORITY, A)
    assert profile_problems(fits, zone) == []
    long_label = "l" * 40
    profile = make_profile(
        long_label,
        Method.PRIORITY,
        replace(A, name="e" * 40),
        srv=(SrvService("_" + "s" * 30 + "._udp", 5060),),
    )
    problems = profile_problems(profile, zone)
    assert fields(problems) == ["srv.0.service", "endpoints.0.name"]
    assert all("longer than 255 octets" in p.message for p in problems)
    longer = replace(profile, name="l" * 63 + "." + "l" * 10)
    assert "name" in fields(profile_problems(longer, zone))


def test_a_write_checks_the_profiles_that_could_own_its_names_and_its_children() -> (
    None
):
    """Every label suffix of every owned name inside the zone, as a profile
    name, and the profiles it nests: the rest of the zone cannot collide."""
    profile = make_profile(
        "app",
        Method.PRIORITY,
        A,
        make_endpoint("to-eu", None, kind=EndpointKind.NESTED, child="eu", priority=2),
        srv=(SrvService("_sip._udp", 5060),),
    )
    assert neighbour_names(profile, "tm.example.") == {
        "@",
        "app",
        "a.app",
        "_udp.app",
        "_sip._udp.app",
        "eu",
    }


def test_glue_is_checked_against_the_profiles_that_could_own_its_names() -> None:
    """In-zone glue names and their suffixes; out-of-zone glue owns nothing here."""
    zone = make_zone(
        glue=(
            ("ns1.dns.tm.example.", ip_address("192.0.2.53")),
            ("ns.provider.example.", ip_address("192.0.2.54")),
        )
    )
    assert glue_neighbour_names(zone) == {"@", "dns", "ns1.dns"}
    assert glue_neighbour_names(make_zone()) == frozenset()


def test_the_root_zone_is_refused() -> None:
    """tmdns serves delegated zones; the message says what to do instead."""
    [problem] = header_problems(make_zone(name="."))
    assert problem.field == "name" and "delegate a zone below it" in problem.message


def test_an_in_zone_name_server_needs_glue_and_glue_needs_a_name_server() -> None:
    """Without glue the delegation to an in-zone server cannot be followed;
    glue for a host that is no name server is a mistake. Both on `glue`."""
    assert header_problems(make_zone()) == [
        Problem(
            "glue",
            "name server ns1.tm.example. (ns.0) is inside the zone: "
            "give its addresses in 'glue'",
        )
    ]
    stray = make_zone(
        ns=("ns.provider.example.",),
        glue=(("ns9.tm.example.", ip_address("192.0.2.53")),),
    )
    assert header_problems(stray) == [
        Problem("glue", "ns9.tm.example. is not one of the zone's name servers ('ns')")
    ]
    glued = make_zone(glue=(("ns1.tm.example.", ip_address("192.0.2.53")),))
    assert header_problems(glued) == []
