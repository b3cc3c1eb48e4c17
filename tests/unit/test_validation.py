from dataclasses import replace

import pytest

from app.domain.model import EndpointKind, Method, Profile
from app.domain.validation import profile_problems, zone_problems
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
