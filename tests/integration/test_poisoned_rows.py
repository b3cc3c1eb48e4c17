"""One bad row never stops the fleet: a value written straight into the
database that the snapshot cannot load is quarantined, the profile keeps its
last good version, every other change keeps flowing, a new instance starts
and serves the rest, and the API refuses to edit the unreadable profile with
the field at fault until it is replaced."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from app.store.engine import make_engine
from tests.support.sample import APP, ZONE
from tests.support.tmdns import Tmdns, started_tmdns

WEB: dict[str, Any] = {
    "name": "web",
    "method": "weighted",
    "monitor": {"protocol": "none"},
    "endpoints": [{"name": "a", "address": "192.0.2.10"}],
}


async def poison(db_url: str, endpoint: str, address: str) -> None:
    """What an older version, a manual fix or a bug could leave behind."""
    engine = make_engine(db_url)
    try:
        async with engine.begin() as conn:
            await conn.execute(
                text(
                    "UPDATE endpoint SET address = :address WHERE name = :name"
                ).bindparams(address=address, name=endpoint)
            )
            await conn.execute(
                text(
                    "UPDATE profile SET revision = "
                    "(SELECT generation + 1 FROM meta) WHERE id = "
                    "(SELECT profile_id FROM endpoint WHERE name = :name)"
                ).bindparams(name=endpoint)
            )
            await conn.execute(text("UPDATE meta SET generation = generation + 1"))
    finally:
        await engine.dispose()


async def _healthz(tm: Tmdns) -> tuple[int, Any]:
    async with tm.http.get(tm.base.removesuffix("/api/v1") + "/healthz") as r:
        return r.status, await r.json()


async def test_a_poisoned_row_is_quarantined_and_everything_else_flows(
    db_url: str,
) -> None:
    async with started_tmdns(db_url) as tm:
        await tm.ok("POST", "/zones", ZONE)
        await tm.ok("POST", "/zones/tm.example./profiles", APP)
        await tm.ok("POST", "/zones/tm.example./profiles", WEB)
        await tm.wait_for(lambda: _answer(tm, "web.tm.example.", ["192.0.2.10"]), 2)

        await poison(db_url, "primary", "fe80::1%eth0")

        async def quarantined() -> bool:
            _, body = await _healthz(tm)
            return bool(body["quarantined"])

        await tm.wait_for(quarantined, limit=2)
        status, body = await _healthz(tm)
        assert status == 200  # one bad profile must not take the instance out
        [entry] = body["quarantined"]
        assert entry["zone"] == "tm.example." and entry["profile"] == "app"
        assert entry["kept"] is True and "fe80::1%eth0" in entry["reason"]
        # The last good version answers; the API names the field at fault and
        # the way out, for a read and for an edit alike (never a 500).
        assert await tm.addresses("app.tm.example.") == ["127.0.0.1"]
        for method, path, body in [
            ("GET", "/zones/tm.example./profiles/app", None),
            (
                "PATCH",
                "/zones/tm.example./profiles/app/endpoints/primary",
                {"address": "127.0.0.5"},
            ),
        ]:
            status, refused = await tm.call(method, path, body)
            assert status == 409, (method, refused)
            message = refused["error"]["message"]
            assert "endpoints.primary" in message and "fe80::1%eth0" in message
            assert "delete it and create it again" in message
        metrics = await (
            await tm.http.get(tm.base.removesuffix("/api/v1") + "/metrics")
        ).text()
        assert "tmdns_quarantined_profiles 1.0" in metrics

        # Every other change keeps flowing within a second.
        await tm.ok(
            "POST",
            "/zones/tm.example./profiles/web/endpoints",
            {"name": "b", "address": "192.0.2.11", "enabled": True},
        )
        await tm.ok(
            "PATCH", "/zones/tm.example./profiles/web/endpoints/a", {"enabled": False}
        )
        took = await tm.wait_for(
            lambda: _answer(tm, "web.tm.example.", ["192.0.2.11"]), limit=1
        )
        assert took < 1

        # A new instance starts on the same database and serves everything else.
        async with started_tmdns(db_url, role="dns") as fresh:
            assert await fresh.addresses("web.tm.example.") == ["192.0.2.11"]
            assert await fresh.addresses("app.tm.example.") == []
            reply = await fresh.query("app.tm.example.", "A")
            assert reply.rcode() == 3  # left out here: it never loaded

        # Replaced through the API, the quarantine ends.
        await tm.ok("DELETE", "/zones/tm.example./profiles/app")
        fixed = {**APP, "endpoints": [{"name": "primary", "address": "127.0.0.5"}]}
        await tm.ok("POST", "/zones/tm.example./profiles", fixed)

        async def healed() -> bool:
            _, body = await _healthz(tm)
            return not body["quarantined"]

        await tm.wait_for(healed, limit=2)
        assert "127.0.0.5" in await tm.addresses("app.tm.example.")


async def _answer(tm: Tmdns, name: str, expected: list[str]) -> bool:
    return await tm.addresses(name) == expected
