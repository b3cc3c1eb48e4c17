from dataclasses import replace

import pytest

from app.domain.model import EndpointKind, Failback, Method, Monitor, MonitorProtocol
from app.domain.validation import profile_problems, zone_problems
from tests.builders import make_endpoint, make_profile, make_zone

A = make_endpoint("a", "127.0.0.1", priority=1)
B = make_endpoint("b", "127.0.0.2", priority=2)


def fields(problems) -> list[str]:
    return [p.field for p in problems]


def test_a_valid_profile_has_no_problems() -> None:
    assert profile_problems(make_profile("app", Method.PRIORITY, A, B)) == []


def test_a_repeated_priority_names_the_endpoint_that_holds_it() -> None:
    problems = profile_problems(
        make_profile("app", Method.PRIORITY, A, replace(B, priority=1))
    )
    assert fields(problems) == ["endpoints.1.priority"]
    assert "'a'" in problems[0].message


def test_a_repeated_name_is_reported_on_the_second_endpoint() -> None:
    problems = profile_problems(
        make_profile("app", Method.PRIORITY, A, replace(B, name="a"))
    )
    assert fields(problems) == ["endpoints.1.name"]


@pytest.mark.parametrize(
    "method", [Method.GEOGRAPHIC, Method.SUBNET, Method.MULTIVALUE, Method.PERFORMANCE]
)
def test_methods_without_a_router_are_refused(method: Method) -> None:
    assert fields(profile_problems(make_profile("app", method, A))) == ["method"]


def test_parking_failback_is_refused_until_it_is_built() -> None:
    profile = make_profile("app", Method.PRIORITY, A, failback=Failback.PARKING)
    assert fields(profile_problems(profile)) == ["failback"]


def test_unprobed_monitor_protocols_are_refused_on_profile_and_endpoint() -> None:
    http = Monitor(protocol=MonitorProtocol.HTTP)
    profile = make_profile(
        "app", Method.PRIORITY, replace(A, monitor=http), monitor=http
    )
    assert fields(profile_problems(profile)) == [
        "monitor.protocol",
        "endpoints.0.monitor.protocol",
    ]


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
