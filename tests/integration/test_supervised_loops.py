"""Every background loop of every role is supervised: an exception injected
into one call of each loop is logged with its traceback, the loop is started
again, counted in /metrics, and goes on doing its job."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest

from tests.support.faults import FaultyStore
from tests.support.listeners import listening
from tests.support.ports import free_port
from tests.support.sample import ZONE
from tests.support.tmdns import Tmdns, started_tmdns

# loop name → (the store method one of its calls goes through, how many calls
# of it start-up makes before the loop's own)
INJECTIONS = {
    "refresh": ("pulse", 2),
    "probe-scheduler": ("views_of", 0),
    "verdict-writer": ("record_health_batch", 0),
    "heartbeat": ("heartbeat", 0),
    "retention": ("prune_transitions", 0),
    "webhooks": ("list_webhooks", 0),
}


async def _metrics(tm: Tmdns) -> str:
    async with tm.http.get(tm.base.removesuffix("/api/v1") + "/metrics") as r:
        return await r.text()


async def _healthz(tm: Tmdns) -> tuple[int, Any]:
    async with tm.http.get(tm.base.removesuffix("/api/v1") + "/healthz") as r:
        return r.status, await r.json()


@pytest.mark.parametrize("loop", sorted(INJECTIONS))
async def test_an_exception_in_each_loop_is_logged_and_the_loop_recovers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, loop: str
) -> None:
    port = free_port()
    method, after = INJECTIONS[loop]
    opened: list[FaultyStore] = []

    def open_store(url: str) -> Any:
        manager = FaultyStore.open(url)

        class Arming:
            async def __aenter__(self) -> FaultyStore:
                store = await manager.__aenter__()
                store.arm(method, after)  # the loop's first call through it fails
                opened.append(store)
                return store

            async def __aexit__(self, *exc: object) -> None:
                await manager.__aexit__(*exc)

        return Arming()

    with caplog.at_level(logging.ERROR, logger="app.supervisor"):
        async with (
            listening(port),
            started_tmdns(f"sqlite:///{tmp_path}/t.db", open_store=open_store) as tm,
        ):
            store = opened[0]
            await tm.ok("POST", "/zones", ZONE)
            await tm.ok(
                "POST",
                "/zones/tm.example./profiles",
                {
                    "name": "web",
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
            status = tm.run.supervisor.loops[loop]
            await tm.wait_for(_async(lambda: status.restarts == 1), limit=5)
            # ...and it goes on doing its job: each loop's own evidence.
            await tm.wait_for(_async(lambda: store.calls[method] >= 2), limit=5)
            await tm.wait_for(
                lambda: _answers(tm, "web.tm.example.", ["127.0.0.1"]), limit=3
            )
            await tm.wait_for(lambda: _online(tm), limit=5)
            assert f'tmdns_loop_restarts_total{{loop="{loop}"}} 1.0' in await _metrics(
                tm
            )
            code, body = await _healthz(tm)
            assert code == 200, body
            assert body["loops"][loop] == {
                "state": "running",
                "restarts": 1,
                "last_error": f"InjectedFault: injected into {method}",
            }
    [record] = [r for r in caplog.records if f"loop {loop} failed" in r.getMessage()]
    assert record.exc_info is not None
    assert "injected into" in str(record.exc_info[1])


def _async(check: Any) -> Any:
    async def wrapped() -> bool:
        return bool(check())

    return wrapped


async def _answers(tm: Tmdns, name: str, expected: list[str]) -> bool:
    return await tm.addresses(name) == expected


async def _online(tm: Tmdns) -> bool:
    body = await tm.ok("GET", "/zones/tm.example./profiles/web/health")
    return bool(body["endpoints"][0]["state"] == "online")


async def test_a_loop_that_keeps_failing_turns_healthz_503_while_dns_answers(
    tmp_path: Path,
) -> None:
    blocked = tmp_path / "blocked"
    blocked.mkdir()  # a directory where the snapshot file should be
    async with started_tmdns(
        f"sqlite:///{tmp_path}/t.db",
        dns={"listen": "127.0.0.1:0", "snapshot_file": str(blocked)},
    ) as tm:
        await tm.ok("POST", "/zones", ZONE)
        supervisor = tm.run.supervisor
        await tm.wait_for(_async(lambda: "snapshot-file" in supervisor.failing()), 10)
        code, body = await _healthz(tm)
        assert code == 503
        assert "loop snapshot-file keeps failing" in body["problems"]
        assert body["loops"]["snapshot-file"]["state"] == "failing"
        reply = await tm.query("tm.example.", "SOA")
        assert reply.answer  # DNS keeps answering


async def test_healthz_reports_freshness_and_the_snapshot_generation(
    tmp_path: Path,
) -> None:
    async with started_tmdns(f"sqlite:///{tmp_path}/t.db") as tm:
        created = await tm.ok("POST", "/zones", ZONE)
        assert created
        await asyncio.sleep(0.5)
        code, body = await _healthz(tm)
        assert code == 200, body
        assert body["source"] == "database"
        assert body["lag_generations"] == 0
        assert body["store_generation"] == body["snapshot_generation"]
        assert body["lag_seconds"] < 1
        assert body["database"] == "ok" and body["quarantined"] == []
        text = await _metrics(tm)
        generation = body["snapshot_generation"]
        assert f"tmdns_store_generation {float(generation)}" in text
        assert "tmdns_store_up 1.0" in text
