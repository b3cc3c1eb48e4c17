"""The routing fields of the API: geo codes, ranges, locations, nesting,
overrides with expiry, the latency table and explain."""

import time
from typing import Any

import pytest

from tests.support.tmdns import Tmdns

pytestmark = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
ZONE = {"name": "tm.example", "ns": ["ns.example.net"]}
PROFILES = "/zones/tm.example/profiles"


def profile(method: str, *endpoints: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {
        "name": "p",
        "method": method,
        "monitor": {"protocol": "none"},
        "endpoints": list(endpoints),
        **more,
    }


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (
            profile("geographic", {"name": "a", "address": "127.0.0.1", "geo": ["XX"]}),
            "endpoints.0.geo.0",
        ),
        (
            profile(
                "geographic", {"name": "a", "address": "127.0.0.1", "geo": ["GEO-ZZ"]}
            ),
            "endpoints.0.geo.0",
        ),
        (
            profile(
                "geographic", {"name": "a", "address": "127.0.0.1", "geo": ["US-XX"]}
            ),
            "endpoints.0.geo.0",
        ),
        (
            profile(
                "geographic",
                {"name": "a", "address": "127.0.0.1", "geo": ["DE"]},
                {"name": "b", "address": "127.0.0.2", "geo": ["de"]},
            ),
            "endpoints.1.geo",
        ),
        (
            profile(
                "subnet",
                {"name": "a", "address": "127.0.0.1", "subnets": ["10.0.0.1/8"]},
            ),
            "endpoints.0.subnets.0",
        ),
        (
            profile(
                "subnet",
                {"name": "a", "address": "127.0.0.1", "subnets": ["10.0.0.0/8"]},
                {"name": "b", "address": "127.0.0.2", "subnets": ["10.2.0.0/16"]},
            ),
            "endpoints.1.subnets.0",
        ),
        (
            profile(
                "performance",
                {"name": "a", "address": "127.0.0.1", "location": "mars:olympus-1"},
            ),
            "endpoints.0.location",
        ),
        (
            profile(
                "performance",
                {
                    "name": "a",
                    "address": "127.0.0.1",
                    "location": {"lat": 91, "lon": 0},
                },
            ),
            "endpoints.0.location.lat",
        ),
        (
            profile("multivalue", {"name": "a", "address": "127.0.0.1"}, max_return=11),
            "max_return",
        ),
        (
            profile("priority", {"name": "a", "kind": "nested", "child": "missing"}),
            "child",
        ),
        (
            profile(
                "priority",
                {
                    "name": "a",
                    "address": "127.0.0.1",
                    "override": {"state": "sideways"},
                },
            ),
            "endpoints.0.override.state",
        ),
    ],
)
async def test_invalid_routing_fields_name_the_field(
    tm: Tmdns, body: dict[str, Any], field: str
) -> None:
    await tm.ok("POST", "/zones", ZONE)
    status, payload = await tm.call("POST", PROFILES, body)
    assert status == 422, payload
    assert field in [d["field"] for d in payload["error"]["details"]], payload


async def test_geo_codes_and_locations_come_back_canonical(tm: Tmdns) -> None:
    await tm.ok("POST", "/zones", ZONE)
    saved = await tm.ok(
        "POST",
        PROFILES,
        profile(
            "performance",
            {
                "name": "a",
                "address": "127.0.0.1",
                "geo": ["us-ca", "geo-eu", "world"],
                "location": "AWS:EU-WEST-1",
            },
        ),
    )
    [endpoint] = saved["endpoints"]
    assert endpoint["geo"] == ["US-CA", "GEO-EU", "WORLD"]
    assert endpoint["location"]["region"] == "aws:eu-west-1"
    assert endpoint["location"]["lat"] == pytest.approx(53.3, abs=0.5)


async def test_a_nesting_cycle_is_refused(tm: Tmdns) -> None:
    await tm.ok("POST", "/zones", ZONE)
    await tm.ok(
        "POST",
        PROFILES,
        {**profile("priority", {"name": "x", "address": "127.0.0.1"}), "name": "a"},
    )
    await tm.ok(
        "POST",
        PROFILES,
        {
            **profile("priority", {"name": "to-a", "kind": "nested", "child": "a"}),
            "name": "b",
        },
    )
    status, payload = await tm.call(
        "POST",
        PROFILES + "/a/endpoints",
        {"name": "to-b", "kind": "nested", "child": "b"},
    )
    assert status == 422 and "cycle" in payload["error"]["message"]


async def test_a_nested_profile_answers_with_its_child(tm: Tmdns) -> None:
    await tm.ok("POST", "/zones", ZONE)
    await tm.ok(
        "POST",
        PROFILES,
        {**profile("weighted", {"name": "x", "address": "127.0.0.7"}), "name": "child"},
    )
    await tm.ok(
        "POST",
        PROFILES,
        {
            **profile(
                "priority",
                {"name": "in", "kind": "nested", "child": "child.tm.example."},
            ),
            "name": "parent",
        },
    )
    await tm.wait_for(lambda: _addresses(tm, "parent.tm.example.", ["127.0.0.7"]), 1.0)


async def test_an_override_expires_without_another_call(tm: Tmdns) -> None:
    await tm.ok("POST", "/zones", ZONE)
    await tm.ok(
        "POST",
        PROFILES,
        profile(
            "priority",
            {"name": "a", "address": "127.0.0.1"},
            {"name": "b", "address": "127.0.0.2"},
        ),
    )
    until = time.time() + 1.5
    patched = await tm.ok(
        "PATCH",
        PROFILES + "/p/endpoints/a",
        {"override": {"state": "drain", "reason": "kernel update", "until": until}},
    )
    assert patched["override"]["reason"] == "kernel update"
    await tm.wait_for(lambda: _addresses(tm, "p.tm.example.", ["127.0.0.2"]), 1.0)
    await tm.wait_for(lambda: _addresses(tm, "p.tm.example.", ["127.0.0.1"]), 3.0)
    assert time.time() >= until


async def test_latency_table_validation(tm: Tmdns) -> None:
    status, payload = await tm.call(
        "PUT",
        "/latency",
        {
            "entries": [
                {"network": "10.0.0.0/8", "rtt": {"aws:eu-west-1": 1}},
                {"network": "10.0.0.0/8", "rtt": {"aws:eu-west-1": 2}},
            ]
        },
    )
    assert status == 422 and payload["error"]["details"][0]["field"] == "entries"
    for rtt in ({"aws:eu-west-1": -1}, {"nope:x": 5}):
        status, payload = await tm.call(
            "PUT", "/latency", {"entries": [{"network": "10.0.0.0/8", "rtt": rtt}]}
        )
        assert status == 422 and payload["error"]["details"][0]["field"].startswith(
            "entries.0.rtt"
        )


async def test_explain_reports_why_and_refuses_bad_parameters(tm: Tmdns) -> None:
    await tm.ok("POST", "/zones", ZONE)
    await tm.ok(
        "POST",
        PROFILES,
        profile(
            "priority",
            {"name": "a", "address": "127.0.0.1", "enabled": False},
            {"name": "b", "address": "127.0.0.2"},
        ),
    )
    await tm.wait_for(lambda: _addresses(tm, "p.tm.example.", ["127.0.0.2"]), 1.0)
    body = await tm.ok("GET", "/explain?name=P.tm.example&type=a&client=192.0.2.1")
    assert body["rcode"] == "NOERROR" and body["answer"][0]["data"] == "127.0.0.2"
    assert "profile p.tm.example. method priority" in body["why"]
    assert any(
        line.startswith("endpoint a:") and "disabled" in line for line in body["why"]
    )
    for bad in (
        "type=BOGUS&name=p.tm.example",
        "name=p.tm.example&client=nope",
        "type=A",
    ):
        status, payload = await tm.call("GET", f"/explain?{bad}")
        assert status == 422, payload


async def _addresses(tm: Tmdns, name: str, expected: list[str]) -> bool:
    return await tm.addresses(name) == expected
