"""The REST API over real HTTP against the real store, on both engines."""

from typing import Any

import pytest

from app.store import SqlStore
from tests.support.tmdns import Tmdns

pytestmark = pytest.mark.postgres
ZONE = {
    "name": "tm.example.",
    "ns": ["ns1.tm.example."],
    "glue": {"ns1.tm.example.": ["127.0.0.1"]},
}
PROFILE = {
    "name": "app",
    "method": "priority",
    "monitor": {"protocol": "none"},
    "endpoints": [
        {"name": "primary", "address": "127.0.0.1"},
        {"name": "secondary", "address": "127.0.0.2"},
    ],
}
PROFILES = "/zones/tm.example./profiles"
ENDPOINTS = PROFILES + "/app/endpoints"


async def seeded(tm: Tmdns) -> None:
    await tm.ok("POST", "/zones", ZONE)
    await tm.ok("POST", PROFILES, PROFILE)


async def database_state(tm: Tmdns, db_url: str) -> tuple[Any, int]:
    """What an invalid request must leave alone: stored config and generation."""
    async with SqlStore.open(db_url) as store:
        config, health = await store.load_all()
        return (config, health), await store.generation()


async def test_created_profile_reads_back_with_defaults_and_canonical_names(
    tm: Tmdns,
) -> None:
    await seeded(tm)
    profile = await tm.ok("GET", "/zones/TM.Example/profiles/APP.tm.example.")
    assert profile["fqdn"] == "app.tm.example."
    assert profile["ttl"] == 60 and profile["failback"] == "homing"
    assert profile["all_down"] == "serve_all"
    assert [(e["name"], e["priority"], e["weight"]) for e in profile["endpoints"]] == [
        ("primary", 1, 1),
        ("secondary", 2, 1),
    ]
    assert profile["endpoints"][0]["fqdn"] == "primary.app.tm.example."
    zone = await tm.ok("GET", "/zones/tm.example")
    assert (
        zone["name"] == "tm.example." and zone["soa_email"] == "hostmaster@tm.example"
    )


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        (ENDPOINTS, {"name": "third", "address": "127.0.0.3", "weight": -1}, "weight"),
        (ENDPOINTS, {"name": "third", "address": "127.0.0.300"}, "address"),
        (ENDPOINTS, {"name": "third", "address": "not-an-ip"}, "address"),
        (ENDPOINTS, {"name": "primary", "address": "127.0.0.3"}, "name"),
        (
            ENDPOINTS,
            {"name": "third", "address": "127.0.0.3", "priority": 1},
            "priority",
        ),
        (
            ENDPOINTS,
            {"name": "third", "address": "127.0.0.3", "colour": "red"},
            "colour",
        ),
        (ENDPOINTS, {"name": "bad name!", "address": "127.0.0.3"}, "name"),
        (PROFILES, {**PROFILE, "name": "other", "method": "fastest"}, "method"),
        (PROFILES, {**PROFILE, "name": "other", "ttl": -1}, "ttl"),
        (
            PROFILES,
            {
                **PROFILE,
                "name": "other",
                "endpoints": [{"name": "a", "address": "127.0.0.1", "weight": -1}],
            },
            "endpoints.0.weight",
        ),
        (
            PROFILES,
            {
                **PROFILE,
                "name": "other",
                "endpoints": [
                    {"name": "a", "address": "127.0.0.1"},
                    {"name": "a", "address": "127.0.0.2"},
                ],
            },
            "endpoints.1.name",
        ),
        (
            PROFILES,
            {**PROFILE, "name": "other", "monitor": {"interval": 5, "timeout": 9}},
            "monitor.timeout",
        ),
        (PROFILES, PROFILE, "name"),
        ("/zones", ZONE, "name"),
        ("/zones", {"name": "x..example", "ns": ["ns1.example."]}, "name"),
        ("/zones", {"name": "new.example"}, "ns"),
    ],
)
async def test_invalid_payloads_get_4xx_naming_the_field_and_change_nothing(
    tm: Tmdns, db_url: str, path: str, body: dict[str, Any], field: str
) -> None:
    await seeded(tm)
    before = await database_state(tm, db_url)
    status, payload = await tm.call("POST", path, body)
    assert 400 <= status < 500, payload
    error = payload["error"]
    assert {"code", "message", "details"} <= error.keys()
    assert field in [d["field"] for d in error["details"]], error
    assert await database_state(tm, db_url) == before


@pytest.mark.parametrize("token", [None, "wrong-token"])
async def test_a_missing_or_wrong_token_is_401_and_changes_nothing(
    tm: Tmdns, db_url: str, token: str | None
) -> None:
    await seeded(tm)
    before = await database_state(tm, db_url)
    for method, path, body in [
        ("GET", "/zones", None),
        ("POST", "/zones", ZONE),
        ("DELETE", "/zones/tm.example.", None),
    ]:
        status, payload = await tm.call(method, path, body, token=token)
        assert status == 401
        assert payload["error"]["details"][0]["field"] == "Authorization"
    assert await database_state(tm, db_url) == before


async def test_malformed_json_is_400_and_not_an_object_is_400(tm: Tmdns) -> None:
    async with tm.http.post(
        tm.base + "/zones",
        data=b"{nope",
        headers={
            "Authorization": "Bearer test-token-with-write-scope",
            "Content-Type": "application/json",
        },
    ) as response:
        assert response.status == 400
        assert (await response.json())["error"]["code"] == "bad_json"
    status, _ = await tm.call("POST", "/zones", ["a list"])
    assert status == 400


async def test_patch_changes_only_what_it_names(tm: Tmdns) -> None:
    await seeded(tm)
    patched = await tm.ok(
        "PATCH",
        PROFILES + "/app",
        {"ttl": 30, "monitor": {"interval": 10, "timeout": 2}},
    )
    assert patched["ttl"] == 30 and patched["method"] == "priority"
    assert (
        patched["monitor"]["interval"] == 10
        and patched["monitor"]["protocol"] == "none"
    )
    endpoint = await tm.ok("PATCH", ENDPOINTS + "/secondary", {"weight": 7})
    assert (endpoint["weight"], endpoint["priority"], endpoint["address"]) == (
        7,
        2,
        "127.0.0.2",
    )


async def test_endpoint_create_list_get_delete(tm: Tmdns) -> None:
    await seeded(tm)
    created = await tm.ok("POST", ENDPOINTS, {"name": "Third", "address": "::1"})
    assert (created["name"], created["priority"]) == ("third", 3)
    assert [e["name"] for e in await tm.ok("GET", ENDPOINTS)] == [
        "primary",
        "secondary",
        "third",
    ]
    assert (await tm.ok("GET", ENDPOINTS + "/third"))["address"] == "::1"
    status, _ = await tm.call("DELETE", ENDPOINTS + "/third")
    assert status == 204
    status, payload = await tm.call("GET", ENDPOINTS + "/third")
    assert status == 404 and payload["error"]["code"] == "not_found"


async def test_deleting_a_profile_and_a_zone(tm: Tmdns) -> None:
    await seeded(tm)
    assert (await tm.call("DELETE", PROFILES + "/app"))[0] == 204
    assert (await tm.call("GET", PROFILES + "/app"))[0] == 404
    assert (await tm.call("DELETE", "/zones/tm.example"))[0] == 204
    assert await tm.ok("GET", "/zones") == []


async def test_unknown_zone_is_404_in_the_envelope(tm: Tmdns) -> None:
    status, payload = await tm.call("GET", "/zones/nope.example./profiles")
    assert status == 404 and "nope.example." in payload["error"]["message"]


async def test_names_colliding_in_the_zone_are_rejected(tm: Tmdns, db_url: str) -> None:
    await seeded(tm)
    before = await database_state(tm, db_url)
    status, payload = await tm.call(
        "POST", PROFILES, {**PROFILE, "name": "primary.app"}
    )
    assert status == 422 and "primary.app.tm.example." in payload["error"]["message"]
    assert await database_state(tm, db_url) == before


async def test_a_standby_endpoint_weight_0_is_taken_and_answered_only_when_needed(
    tm: Tmdns,
) -> None:
    """Weight 0 is standby (Route 53): accepted, read back, and in DNS only
    once the endpoint with a weight is drained."""
    await tm.ok("POST", "/zones", ZONE)
    pool = {
        "name": "pool",
        "method": "weighted",
        "monitor": {"protocol": "none"},
        "endpoints": [
            {"name": "live", "address": "127.0.0.1", "weight": 5},
            {"name": "spare", "address": "127.0.0.2", "weight": 0},
        ],
    }
    created = await tm.ok("POST", PROFILES, pool)
    assert [e["weight"] for e in created["endpoints"]] == [5, 0]

    async def live_answers() -> bool:
        return await tm.addresses("pool.tm.example.") == ["127.0.0.1"]

    await tm.wait_for(live_answers, limit=2)
    for _ in range(20):
        assert await tm.addresses("pool.tm.example.") == ["127.0.0.1"]
    await tm.ok(
        "PATCH",
        PROFILES + "/pool/endpoints/live",
        {"override": {"state": "drain", "reason": "upgrade"}},
    )

    async def spare_answers() -> bool:
        return await tm.addresses("pool.tm.example.") == ["127.0.0.2"]

    await tm.wait_for(spare_answers, limit=2)


@pytest.mark.parametrize("written", [2, "50%"])
async def test_min_available_and_ttl_degraded_read_back_as_written(
    tm: Tmdns, written: int | str
) -> None:
    await tm.ok("POST", "/zones", ZONE)
    body = {**PROFILE, "min_available": written, "ttl_degraded": 15}
    created = await tm.ok("POST", PROFILES, body)
    assert (created["min_available"], created["ttl_degraded"]) == (written, 15)
    again = await tm.ok("GET", PROFILES + "/app")
    assert (again["min_available"], again["ttl_degraded"]) == (written, 15)
