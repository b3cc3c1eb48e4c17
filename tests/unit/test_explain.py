"""explain() (app/domain/explain.py) reports exactly what answer() gives the
same client, and says why: the method, every endpoint with its state, and the
reason each skipped endpoint was skipped."""

from __future__ import annotations

from dataclasses import replace
from ipaddress import ip_address, ip_network
from random import Random

import pytest

from app.domain.answer import answer
from app.domain.draw import RandomDraw
from app.domain.explain import Question, explain, explained_endpoints, rtype_of
from app.domain.model import (
    Config,
    EndpointKind,
    Health,
    HealthState,
    Location,
    Method,
    Monitor,
    Override,
    OverrideState,
    SrvService,
)
from app.domain.query import GeoFacts, QueryContext, RType
from app.domain.records import Record, Srv
from app.domain.snapshot import compile_snapshot
from tests.builders import make_endpoint, make_profile, make_zone
from tests.unit.routing.support import DUBLIN, PARIS, TOKYO, VIRGINIA, locator

TCP = Monitor()
SIP = SrvService("_sip._udp", 5060)
NOW = 0.0
LOCATE = locator(
    {
        "198.51.100.0/24": GeoFacts("EU", "FR", "FR-IDF", *PARIS, prefix=22),
        "203.0.113.0/24": GeoFacts("NA", "US", "US-CA", 37.77, -122.42),
        "100.64.0.0/10": GeoFacts("AS", "JP", "JP-13", *TOKYO),
        "2001:db8:de::/48": GeoFacts("EU", "DE", "DE-BY", 48.1, 11.6),
    }
)
CLIENTS = [
    "198.51.100.7",
    "203.0.113.9",
    "100.64.3.3",
    "10.1.2.3",
    "10.0.0.8",
    "192.0.2.200",
    "2001:db8:de::1",
    "2001:db8:1::5",
    None,
]
SEEDS = [1, 7, 1234]


def endpoints(base: int):
    """Five endpoints, one each: online, offline, disabled, forced down with a
    reason, and IPv6; with geo codes, ranges and locations for every method."""
    return (
        make_endpoint(
            "alpha",
            "192.0.2.1",
            id=base + 1,
            priority=1,
            weight=5,
            geo=("GEO-EU",),
            subnets=("10.1.0.0/16",),
            location=Location(*DUBLIN, region="aws:eu-west-1"),
        ),
        make_endpoint(
            "bravo",
            "192.0.2.2",
            id=base + 2,
            priority=2,
            weight=3,
            geo=("US",),
            subnets=("10.0.0.5-10.0.0.9",),
            location=Location(*VIRGINIA, region="aws:us-east-1"),
        ),
        make_endpoint(
            "charlie",
            "192.0.2.3",
            id=base + 3,
            priority=3,
            enabled=False,
            geo=("JP",),
            location=Location(*TOKYO, region="aws:ap-northeast-1"),
        ),
        make_endpoint(
            "delta",
            "192.0.2.4",
            id=base + 4,
            priority=4,
            override=Override(OverrideState.DOWN, "maintenance"),
            geo=("DE-BY",),
        ),
        make_endpoint(
            "echo",
            "2001:db8::5",
            id=base + 5,
            priority=5,
            geo=("WORLD",),
            subnets=("2001:db8:1::/48",),
            location=Location(*PARIS),
        ),
        make_endpoint(
            "foxtrot",
            "192.0.2.6",
            id=base + 6,
            priority=6,
            weight=2,
            location=Location(*DUBLIN, region="aws:eu-west-1"),
        ),
    )


PROFILES = tuple(
    make_profile(
        method.value, method, *endpoints(10 * i), monitor=TCP, srv=(SIP,), max_return=3
    )
    for i, method in enumerate(Method, start=1)
)
OFFLINE = {10 * i + 2 for i in range(1, len(PROFILES) + 1)}  # every "bravo"
HEALTH = {i: Health(HealthState.OFFLINE, since=0.0) for i in OFFLINE}
LATENCY = (("203.0.113.0/24", {"aws:eu-west-1": 9.0, "aws:us-east-1": 80.0}),)
SNAPSHOT = compile_snapshot(
    Config((make_zone(*PROFILES),), latency=LATENCY), HEALTH, 3, NOW
)


def rows(records: tuple[Record, ...]) -> list[dict[str, object]]:
    def text(r: Record) -> str:
        if isinstance(r.rdata, Srv):
            s = r.rdata
            return f"{s.priority} {s.weight} {s.port} {s.target}"
        return str(r.rdata)

    return [
        {"name": r.name, "type": r.rtype.name, "ttl": r.ttl, "data": text(r)}
        for r in records
    ]


@pytest.mark.parametrize("method", list(Method))
@pytest.mark.parametrize("rtype", [RType.A, RType.AAAA, RType.SRV])
def test_explain_reports_exactly_what_answer_gives(method, rtype) -> None:
    name = (
        f"_sip._udp.{method.value}.tm.example."
        if rtype is RType.SRV
        else f"{method.value}.tm.example."
    )
    for client in CLIENTS:
        address = ip_address(client) if client else None
        bits = address.max_prefixlen if address else 0
        for seed in SEEDS:
            report = explain(
                SNAPSHOT, Question(name, rtype, address), NOW, LOCATE, Random(seed)
            )
            ctx = QueryContext(address, bits, NOW, LOCATE)
            direct = answer(
                SNAPSHOT, name, rtype, ctx, RandomDraw(Random(seed)), explain=True
            )
            assert report["answer"] == rows(direct.answer), (client, seed)
            assert report["additional"] == rows(direct.additional)
            assert report["rcode"] == direct.rcode.name
            assert report["ecs_scope"] == direct.scope
            assert report["why"] == list(direct.trace)


@pytest.mark.parametrize("method", list(Method))
@pytest.mark.parametrize("prefix", [0, 16, 24])
def test_explain_as_an_ecs_prefix_matches_answer_with_that_prefix(method, prefix):
    name = f"{method.value}.tm.example."
    for client in ("198.51.100.0", "10.1.0.0", "203.0.113.0"):
        address = ip_address(client)
        report = explain(
            SNAPSHOT, Question(name, RType.A, address, prefix), NOW, LOCATE, Random(5)
        )
        # As DNS gets it: an ECS option carries only the first `prefix` bits.
        masked = ip_network((address, prefix), strict=False).network_address
        ctx = QueryContext(masked, prefix, NOW, LOCATE)
        direct = answer(SNAPSHOT, name, RType.A, ctx, RandomDraw(Random(5)))
        assert report["answer"] == rows(direct.answer)
        assert report["ecs_scope"] == direct.scope <= prefix


@pytest.mark.parametrize("method", list(Method))
def test_why_names_the_method_every_endpoint_its_state_and_skip_reasons(method):
    report = explain(
        SNAPSHOT,
        Question(f"{method.value}.tm.example.", RType.A, ip_address("198.51.100.7")),
        NOW,
        LOCATE,
        Random(1),
    )
    why = "\n".join(report["why"])
    assert f"method {method.value}" in why
    lines = {
        name: next(
            line for line in report["why"] if line.startswith(f"endpoint {name}:")
        )
        for name in ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot")
    }
    assert lines["alpha"] == "endpoint alpha: checking"  # available, no skip
    assert "offline" in lines["bravo"] and "skipped" in lines["bravo"]
    assert "not available" in lines["bravo"]
    assert "disabled" in lines["charlie"] and "skipped: disabled" in lines["charlie"]
    assert "skipped: operator override down" in lines["delta"]
    assert "maintenance" in lines["delta"]
    assert "skipped" in lines["echo"]  # IPv6 cannot answer an A question
    assert "skipped" not in lines["foxtrot"]


def test_the_report_carries_the_question_and_the_client_location() -> None:
    report = explain(
        SNAPSHOT,
        Question("geographic.tm.example", RType.A, ip_address("2001:db8:de::1")),
        NOW,
        LOCATE,
        Random(1),
    )
    assert report["name"] == "geographic.tm.example."
    assert report["type"] == "A"
    assert report["client"] == "2001:db8:de::1"
    assert report["client_location"]["subdivision"] == "DE-BY"
    assert report["client_location"]["network_prefix"] == 48
    assert report["generation"] == 3
    # DE-BY belongs to delta, which is forced down and so not mapped: GEO-EU
    assert [r["data"] for r in report["answer"]] == ["192.0.2.1"]


def test_without_a_client_there_is_no_location() -> None:
    report = explain(
        SNAPSHOT,
        Question("geographic.tm.example.", RType.A, None),
        NOW,
        LOCATE,
        Random(1),
    )
    assert report["client"] is None and report["client_location"] is None
    assert report["ecs_scope"] == 0


def test_why_follows_a_nested_endpoint_into_its_child() -> None:
    child = make_profile(
        "child",
        Method.PRIORITY,
        make_endpoint("inner", "192.0.2.50", id=51),
        make_endpoint("spare", "192.0.2.51", id=52, priority=2),
        monitor=TCP,
    )
    parent = make_profile(
        "parent",
        Method.PRIORITY,
        make_endpoint("to-child", None, kind=EndpointKind.NESTED, child="child", id=53),
    )
    snapshot = compile_snapshot(
        Config((make_zone(parent, child),)),
        {51: Health(HealthState.OFFLINE, since=0.0)},
        1,
        NOW,
    )
    report = explain(
        snapshot, Question("parent.tm.example.", RType.A, None), NOW, LOCATE, Random(1)
    )
    assert [r["data"] for r in report["answer"]] == ["192.0.2.51"]
    why = "\n".join(report["why"])
    assert "nested to-child" in why and "child" in why
    assert "endpoint to-child: online" in why
    assert "endpoint inner: offline, skipped: not available (offline)" in why


def test_an_expired_override_is_not_given_as_a_skip_reason() -> None:
    expired = replace(
        PROFILES[0].endpoints[3],
        override=Override(OverrideState.DOWN, "old window", until=50.0),
    )
    profile = replace(PROFILES[0], endpoints=(*PROFILES[0].endpoints[:3], expired))
    snapshot = compile_snapshot(Config((make_zone(profile),)), HEALTH, 1, 60.0)
    report = explain(
        snapshot,
        Question(f"{profile.name}.tm.example.", RType.A, None),
        60.0,
        LOCATE,
        Random(1),
    )
    [line] = [x for x in report["why"] if x.startswith("endpoint delta:")]
    assert "override" not in line and "skipped" not in line


@pytest.mark.parametrize(
    ("text", "rtype"),
    [("A", RType.A), ("aaaa", RType.AAAA), (" Srv ", RType.SRV), ("28", RType.AAAA)],
)
def test_a_record_type_is_given_by_name_in_any_case_or_by_number(text, rtype) -> None:
    """What the explain API and CLI accept as the question's type."""
    assert rtype_of(text) == rtype


def test_an_unknown_record_type_is_refused_naming_it() -> None:
    """The operator is told which type was not understood."""
    with pytest.raises(ValueError, match="unknown record type 'AXFRX'"):
        rtype_of("AXFRX")


def test_explain_of_any_shows_the_rfc8482_hinfo_as_zone_file_text() -> None:
    """ANY gets the minimal HINFO answer; explain writes it as a zone file
    would, each string quoted."""
    report = explain(
        SNAPSHOT,
        Question("priority.tm.example.", RType.ANY, None),
        NOW,
        LOCATE,
        Random(1),
    )
    assert report["type"] == "ANY"
    assert report["answer"] == [
        {
            "name": "priority.tm.example.",
            "type": "HINFO",
            "ttl": 3600,
            "data": '"RFC8482" ""',
        }
    ]


def test_names_without_a_profile_list_no_endpoints() -> None:
    """An endpoint's own name and the zone apex hold fixed records, not a
    routed profile: the report has its answer and no endpoint states."""
    own = explain(
        SNAPSHOT,
        Question("alpha.priority.tm.example.", RType.A, None),
        NOW,
        LOCATE,
        Random(1),
    )
    assert [r["data"] for r in own["answer"]] == ["192.0.2.1"]
    assert own["endpoints"] == []
    apex = explain(
        SNAPSHOT, Question("tm.example.", RType.SOA, None), NOW, LOCATE, Random(1)
    )
    assert [r["type"] for r in apex["answer"]] == ["SOA"]
    assert apex["endpoints"] == []


def test_a_type_without_a_name_is_reported_by_its_number() -> None:
    """A question for a type tmdns has no name for is still explained (NODATA)."""
    report = explain(
        SNAPSHOT, Question("priority.tm.example.", 99, None), NOW, LOCATE, Random(1)
    )
    assert report["type"] == "99"
    assert report["rcode"] == "NOERROR" and report["answer"] == []


def test_each_vantage_view_is_listed_under_its_endpoint() -> None:
    """The caller fetches the views of exactly the endpoints listed; explain
    puts each under its endpoint, and none where there are none."""
    name = "priority.tm.example"
    ids = explained_endpoints(SNAPSHOT, name)
    plan = SNAPSHOT.nodes["priority.tm.example."].profile
    assert plan is not None and ids == [e.id for e in plan.profile.endpoints]
    assert explained_endpoints(SNAPSHOT, "tm.example.") == []
    eu = {"vantage": "eu", "state": "offline", "reason": "HTTP 503", "voting": True}
    report = explain(
        SNAPSHOT,
        Question(name, RType.A, None),
        NOW,
        LOCATE,
        Random(1),
        views={ids[0]: [eu]},
    )
    assert report["endpoints"][0]["vantages"] == [eu]
    assert all(e["vantages"] == [] for e in report["endpoints"][1:])
