"""What operators see when the prober stops: stale states, not silent trust; and
the health history kept for the configured retention only."""

import asyncio
import socket
import time
from pathlib import Path

import pytest

from app.domain.health import Transition
from app.domain.model import Health, HealthState, Method
from app.domain.vantages import VANTAGE_STALE_AFTER
from app.store import SqlStore, migrate
from tests.builders import make_endpoint, make_profile, make_zone
from tests.support.ports import free_port
from tests.support.tmdns import started_tmdns

pytestmark = pytest.mark.postgres


async def test_states_turn_stale_when_the_prober_stops(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/tmdns.db"
    port = free_port()
    server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", port)
    try:
        async with started_tmdns(url) as tm:
            await tm.ok(
                "POST", "/zones", {"name": "tm.example", "ns": ["ns.example.net"]}
            )
            await tm.ok(
                "POST",
                "/zones/tm.example/profiles",
                {
                    "name": "app",
                    "method": "priority",
                    "monitor": {
                        "protocol": "tcp",
                        "port": port,
                        "interval": 1,
                        "timeout": 0.5,
                    },
                    "endpoints": [{"name": "a", "address": "127.0.0.1"}],
                },
            )
            path = "/zones/tm.example/profiles/app/health"
            await tm.wait_for(lambda: _first(tm, path, "state", "online"), limit=5.0)
            # A steady state (no transitions) for longer than 3 intervals is fresh
            # as long as the prober keeps reporting.
            await asyncio.sleep(3.5)
            assert not (await tm.ok("GET", path))["endpoints"][0]["stale"]
        # The same database served by an API-only instance: nobody probes any more.
        async with started_tmdns(url, role="api") as api:
            await api.wait_for(lambda: _first(api, path, "stale", True), limit=4.5)
            body = await api.ok("GET", "/explain?name=app.tm.example&client=127.0.0.1")
            [seen] = body["endpoints"]
            assert (seen["name"], seen["state"], seen["stale"]) == ("a", "online", True)
            # The one vantage (this host's name) keeps its vote: nobody is left
            # to judge it, and the states are what it last saw.
            assert [(v["state"], v["voting"]) for v in seen["vantages"]] == [
                ("online", True)
            ]

            async def vantage_stale() -> bool:
                [vantage] = await api.ok("GET", "/vantages")
                assert vantage["name"] == socket.gethostname()
                return bool(vantage["stale"])

            await api.wait_for(vantage_stale, limit=VANTAGE_STALE_AFTER + 1)
            metrics_url = api.base.removesuffix("/api/v1") + "/metrics"
            async with api.http.get(metrics_url) as response:
                text = await response.text()
            assert (
                'tmdns_endpoint_stale{endpoint="a",profile="app",zone="tm.example."}'
                " 1.0"
            ) in text
    finally:
        server.close()
        await server.wait_closed()


async def _first(tm, path: str, key: str, value: object) -> bool:
    return bool((await tm.ok("GET", path))["endpoints"][0][key] == value)


async def test_transitions_past_retention_are_pruned(db_url: str) -> None:
    await asyncio.to_thread(migrate.upgrade, db_url)
    async with SqlStore.open(db_url) as store:
        zone = make_zone(ns=("ns1.other.example.",))
        await store.create_zone(zone, actor="t")
        profile = make_profile("p", Method.PRIORITY, make_endpoint("a"))
        eid = (
            (await store.create_profile(zone.name, profile, actor="t")).endpoints[0].id
        )
        now = time.time()
        old, recent = (
            Health(HealthState.ONLINE, now - 90_000),
            Health(HealthState.OFFLINE, now - 10),
        )
        await store.record_health(eid, old, HealthState.CHECKING)
        await store.record_health(eid, recent, HealthState.ONLINE)
        assert await store.prune_transitions(now - 86_400) == 1
        [kept] = await store.transitions([eid], 10)
        assert isinstance(kept, Transition) and kept.new is HealthState.OFFLINE


async def test_healthz_turns_503_when_the_prober_is_silent(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/tmdns.db"
    async with started_tmdns(url) as tm:
        await tm.ok("POST", "/zones", {"name": "tm.example", "ns": ["ns.example.net"]})
        await tm.ok(
            "POST",
            "/zones/tm.example/profiles",
            {
                "name": "app",
                "method": "priority",
                "monitor": {
                    "protocol": "tcp",
                    "port": free_port(),
                    "interval": 1,
                    "timeout": 0.5,
                },
                "endpoints": [{"name": "a", "address": "127.0.0.1"}],
            },
        )
        healthz = tm.base.removesuffix("/api/v1") + "/healthz"
        await tm.wait_for(lambda: _status(tm, healthz, 200), limit=2.0)
    async with started_tmdns(url, role="api") as api:
        healthz = api.base.removesuffix("/api/v1") + "/healthz"
        await api.wait_for(lambda: _status(api, healthz, 503), limit=4.5)
        async with api.http.get(healthz) as response:
            body = await response.json()
        assert body["prober"] == "stale" and body["database"] == "ok"


async def _status(tm, url: str, status: int) -> bool:
    async with tm.http.get(url) as response:
        return response.status == status


async def test_on_stale_serve_all_answers_every_endpoint_while_the_prober_is_silent(
    tmp_path: Path,
) -> None:
    """A profile with on_stale=serve_all trusts no verdict once the prober has
    gone quiet for 3 intervals, and answers every enabled endpoint; a profile
    with the default (keep) goes on with the last states. When a prober speaks
    again, the states count once more, with no configuration change."""
    url = f"sqlite:///{tmp_path}/tmdns.db"
    up, down = free_port(), free_port()
    server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", up)

    def pool(name: str, on_stale: str) -> dict[str, object]:
        return {
            "name": name,
            "method": "multivalue",
            "max_return": 2,
            "on_stale": on_stale,
            "monitor": {
                "protocol": "tcp",
                "interval": 1,
                "timeout": 0.5,
                "tolerated_failures": 0,
            },
            "endpoints": [
                {"name": "a", "address": "127.0.0.1", "monitor": {"port": up}},
                {
                    "name": "b",
                    "address": "127.0.0.2",
                    "monitor": {"port": down, "address": "127.0.0.1"},
                },
            ],
        }

    try:
        async with started_tmdns(url) as tm:
            await tm.ok(
                "POST", "/zones", {"name": "tm.example", "ns": ["ns.example.net"]}
            )
            for name, policy in (("open", "serve_all"), ("kept", "keep")):
                await tm.ok("POST", "/zones/tm.example/profiles", pool(name, policy))
            for name in ("open", "kept"):
                await tm.wait_for(
                    lambda n=name: _answers(tm, f"{n}.tm.example.", ["127.0.0.1"]),
                    limit=5.0,
                )
        # DNS alone on the same database: nobody probes, the heartbeat ages.
        async with started_tmdns(url, role="dns") as dns:
            both = ["127.0.0.1", "127.0.0.2"]
            took = await dns.wait_for(
                lambda: _answers(dns, "open.tm.example.", both), limit=6.0
            )
            assert took > 1.0  # not before the prober has been quiet for a while
            assert await dns.addresses("kept.tm.example.") == ["127.0.0.1"]
            async with started_tmdns(url, role="prober"):
                await dns.wait_for(
                    lambda: _answers(dns, "open.tm.example.", ["127.0.0.1"]),
                    limit=4.0,
                )
    finally:
        server.close()
        await server.wait_closed()


async def _answers(tm, name: str, expected: list[str]) -> bool:
    return await tm.addresses(name) == expected
