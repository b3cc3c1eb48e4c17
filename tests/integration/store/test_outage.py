"""A PostgreSQL restart, in process: every store call made while it is away
raises StoreUnavailable (never a driver error), the API answers 503 with
Retry-After and the JSON envelope (never 500), DNS keeps answering, /healthz
says so, and everything follows changes again once the database is back."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from app.domain.model import Zone
from app.store import SqlStore, StoreUnavailable, migrate
from tests.support.postgres import PostgresServer
from tests.support.sample import APP, ZONE
from tests.support.tmdns import Tmdns, started_tmdns

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def own_postgres() -> Iterator[PostgresServer]:
    """A server of this module's own: the tests stop it."""
    server = PostgresServer.start()
    yield server
    server.stop()


def durable_database(server: PostgresServer, name: str) -> str:
    """The shared fixtures trade durability for speed (synchronous_commit off);
    a database that is killed with -m immediate must keep what it committed."""
    url = server.create_database(name)
    server.sql(f"ALTER DATABASE {name} SET synchronous_commit = on")
    return url


@pytest.mark.parametrize("mode", ["fast", "immediate"])
async def test_every_call_during_an_outage_is_store_unavailable(
    own_postgres: PostgresServer, mode: str
) -> None:
    url = durable_database(own_postgres, f"outage_{mode}")
    await asyncio.to_thread(migrate.upgrade, url)
    async with SqlStore.open(url) as store:
        await store.pulse()  # a pooled connection, which the stop will cut
        await asyncio.to_thread(own_postgres.stop_server, mode)
        try:
            zone = Zone("x.example.", ("ns.other.example.",), "h@x.example")
            for call in (
                store.pulse(),
                store.load_all(),
                store.list_zones(),
                store.create_zone(zone, actor="test"),
            ):
                with pytest.raises(StoreUnavailable):
                    await call
        finally:
            await asyncio.to_thread(own_postgres.start_server)
        generation, _ = await store.pulse()  # the pool recovers by itself
        assert generation >= 1


async def _get(tm: Tmdns, path: str) -> tuple[int, dict[str, str], object]:
    async with tm.http.get(tm.base.removesuffix("/api/v1") + path) as r:
        return r.status, dict(r.headers), await r.json()


async def test_the_api_answers_503_and_dns_keeps_answering_until_it_is_back(
    own_postgres: PostgresServer,
) -> None:
    url = durable_database(own_postgres, "outage_api")
    async with started_tmdns(url, healthz={"max_lag": 0.5}) as tm:
        await tm.ok("POST", "/zones", ZONE)
        await tm.ok("POST", "/zones/tm.example./profiles", APP)
        await tm.wait_for(lambda: _serves(tm, "app.tm.example."), limit=2)
        await asyncio.to_thread(own_postgres.stop_server, "immediate")
        try:
            for method, path, body in [
                ("GET", "/zones", None),
                ("POST", "/zones/tm.example./profiles", {**APP, "name": "new"}),
            ]:
                status, payload = await tm.call(method, path, body)
                assert status == 503, payload
                assert payload["error"]["code"] == "store_unavailable"
            async with tm.http.get(tm.base + "/zones", headers=_auth()) as r:
                assert r.headers["Retry-After"] == "2"
            assert await tm.addresses("app.tm.example.") == ["127.0.0.1"]
            await tm.wait_for(lambda: _healthz_is(tm, 503), limit=3)
            _, _, body = await _get(tm, "/healthz")
            assert body["database"] == "unreachable"  # type: ignore[index]
            assert body["store_generation"] is None  # type: ignore[index]
        finally:
            await asyncio.to_thread(own_postgres.start_server)
        back = time.monotonic()
        await tm.wait_for(lambda: _creates(tm), limit=5)
        created = time.monotonic()
        await tm.wait_for(lambda: _serves(tm, "new.tm.example."), limit=2)
        assert time.monotonic() - created < 1.5
        await tm.wait_for(lambda: _healthz_is(tm, 200), limit=3)
        assert created - back < 3


def _auth() -> dict[str, str]:
    from tests.support.tmdns import TOKEN

    return {"Authorization": f"Bearer {TOKEN}"}


async def _serves(tm: Tmdns, name: str) -> bool:
    return bool(await tm.addresses(name))


async def _creates(tm: Tmdns) -> bool:
    status, payload = await tm.call(
        "POST", "/zones/tm.example./profiles", {**APP, "name": "new"}
    )
    assert status in (201, 503), payload  # never a 500
    return status == 201


async def _healthz_is(tm: Tmdns, code: int) -> bool:
    status, _, _ = await _get(tm, "/healthz")
    return status == code
