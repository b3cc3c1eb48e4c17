"""A DNS instance that starts while its database is unreachable answers from
its local snapshot file, says so in /healthz, and switches to live data as
soon as the database answers; without a file it starts anyway and waits."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from random import Random

import aiohttp
import dns.asyncquery
import dns.message
import dns.rcode
from sqlalchemy import text

from app.domain.model import Zone
from app.freshness import Freshness, Source
from app.refresh import SnapshotHolder, build_snapshot, refresh_once
from app.runtime import running
from app.store import SqlStore, migrate
from app.store.engine import make_engine
from tests.support import tmdns as harness
from tests.support.sample import APP, ZONE
from tests.support.tmdns import started_tmdns

ZONE_VALUE = Zone("tm.example.", ("ns1.other.example.",), "hostmaster@tm.example")


async def test_a_dns_instance_starts_from_its_file_and_goes_live_on_reconnect(
    tmp_path: Path,
) -> None:
    home, away = tmp_path / "db", tmp_path / "db-away"
    home.mkdir()
    url = f"sqlite:///{home}/t.db"
    saved = tmp_path / "snapshot.json"
    files = {"dns": {"listen": "127.0.0.1:0", "snapshot_file": str(saved)}}
    async with started_tmdns(url, **files) as tm:
        await tm.ok("POST", "/zones", ZONE)
        await tm.ok("POST", "/zones/tm.example./profiles", APP)
        await tm.wait_for(lambda: _file_has(saved, "primary"), limit=3)

    home.rename(away)  # the database is gone: "unable to open database file"
    settings = harness.test_settings(url, role="dns", **files)
    async with running(settings, rng=Random(1)) as run:
        assert run.holder.freshness.source is Source.FILE
        assert await _addresses(run.dns_port, "app.tm.example.") == ["127.0.0.1"]
        away.rename(home)
        deadline = time.monotonic() + 3
        while run.holder.freshness.source is not Source.DATABASE:
            assert time.monotonic() < deadline, "did not switch to live data"
            await asyncio.sleep(0.05)
        assert await _addresses(run.dns_port, "app.tm.example.") == ["127.0.0.1"]


async def _addresses(port: int, name: str) -> list[str]:
    query = dns.message.make_query(name, "A")
    reply = await dns.asyncquery.udp(query, "127.0.0.1", port=port, timeout=2)
    return sorted(rd.to_text() for rrset in reply.answer for rd in rrset)


async def test_without_a_file_it_starts_answers_refused_and_goes_live_later(
    tmp_path: Path,
) -> None:
    home = tmp_path / "db"
    url = f"sqlite:///{home}/t.db"  # its folder does not exist yet
    settings = harness.test_settings(
        url,
        role="dns",
        dns={"listen": "127.0.0.1:0", "snapshot_file": ""},
        metrics={"listen": "127.0.0.1:0"},
    )
    async with running(settings, rng=Random(1)) as run, aiohttp.ClientSession() as http:
        healthz = f"http://127.0.0.1:{run.status_port}/healthz"
        query = dns.message.make_query("app.tm.example.", "A")
        reply = await dns.asyncquery.udp(
            query, "127.0.0.1", port=run.dns_port, timeout=2
        )
        assert reply.rcode() == dns.rcode.REFUSED
        async with http.get(healthz) as r:
            body = await r.json()
            assert r.status == 503 and body["source"] == "none"
        home.mkdir()
        await asyncio.to_thread(migrate.upgrade, url)
        async with SqlStore.open(url) as store:
            await store.create_zone(ZONE_VALUE, actor="test")
        deadline = time.monotonic() + 3
        while run.holder.freshness.source is not Source.DATABASE:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        reply = await dns.asyncquery.udp(
            dns.message.make_query("tm.example.", "SOA"),
            "127.0.0.1",
            port=run.dns_port,
            timeout=2,
        )
        assert reply.rcode() == dns.rcode.NOERROR and reply.answer
        async with http.get(healthz) as r:
            assert r.status == 200, await r.json()


async def test_a_database_that_went_back_in_time_is_read_in_full(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path}/t.db"
    await asyncio.to_thread(migrate.upgrade, url)
    async with SqlStore.open(url) as store:
        await store.create_zone(ZONE_VALUE, actor="test")
        holder = SnapshotHolder(await build_snapshot(store), Freshness(0.0))
        holder.freshness.source = Source.DATABASE
        # A restore (or a standby promoted behind the old primary): a lower
        # generation, with content the snapshot never saw.
        engine = make_engine(url)
        async with engine.begin() as conn:
            await conn.execute(text("UPDATE meta SET generation = 1"))
            await conn.execute(text("UPDATE zone SET negative_ttl = 17"))
        await engine.dispose()
        assert await refresh_once(store, holder)
        assert holder.current.zones["tm.example."].negative_ttl == 17
        assert holder.current.generation == 1


async def _file_has(path: Path, word: str) -> bool:
    return path.exists() and word in path.read_text()
