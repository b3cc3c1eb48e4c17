"""Overrides told as they start, change, end and run out: `override` events
on the stream's backlog, and an expired override removed from the
configuration by the API role (audited by "tmdns"), once however many API
processes try."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from app.override_expiry import OverrideExpiry
from app.store.sql import SqlStore
from tests.support.sample import ZONE
from tests.support.tmdns import Tmdns

WEB = {
    "name": "web",
    "method": "priority",
    "monitor": {"protocol": "none"},
    "endpoints": [
        {"name": "a", "address": "127.0.0.10", "priority": 1},
        {"name": "b", "address": "127.0.0.11", "priority": 2},
    ],
}
A = "/zones/tm.example./profiles/web/endpoints/a"


async def _overrides(tm: Tmdns) -> list[dict[str, Any]]:
    events = await tm.run.store.events_after(0, limit=1000)
    return [e.document() for e in events if e.kind == "override"]


async def test_a_drain_is_told_when_it_starts_changes_and_ends(tm: Tmdns) -> None:
    await tm.ok("POST", "/zones", ZONE)
    await tm.ok("POST", "/zones/tm.example./profiles", WEB)
    await tm.ok("PATCH", A, {"override": {"state": "drain", "reason": "patching"}})
    await tm.ok("PATCH", A, {"override": {"state": "down", "reason": "patching"}})
    await tm.ok("PATCH", A, {"override": None})
    told = await _overrides(tm)
    assert [(e["subject"], e["data"]["change"], e["data"]["state"]) for e in told] == [
        ("tm.example./web/a", "start", "drain"),
        ("tm.example./web/a", "change", "down"),
        ("tm.example./web/a", "end", "down"),
    ]
    assert told[0]["data"] | {"until": None} == {
        "zone": "tm.example.",
        "profile": "web",
        "endpoint": "a",
        "change": "start",
        "state": "drain",
        "reason": "patching",
        "until": None,
        "actor": "bootstrap",
    }


async def test_an_override_that_runs_out_is_removed_audited_and_told(
    tm: Tmdns,
) -> None:
    await tm.ok("POST", "/zones", ZONE)
    await tm.ok("POST", "/zones/tm.example./profiles", WEB)
    await tm.wait_for(lambda: _answer_is(tm, ["127.0.0.10"]), limit=3)
    until = time.time() + 1.5
    await tm.ok("PATCH", A, {"override": {"state": "drain", "until": until}})
    await tm.wait_for(lambda: _answer_is(tm, ["127.0.0.11"]), limit=2)
    # At `until` DNS answers as before, and the override leaves the configuration.
    await tm.wait_for(lambda: _answer_is(tm, ["127.0.0.10"]), limit=4)
    await tm.wait_for(lambda: _cleared(tm), limit=3)
    [entry] = await tm.ok("GET", "/audit?actor=tmdns")
    assert entry["action"] == "override.expire"
    assert entry["resource"] == "tm.example./web"
    told = await _overrides(tm)
    assert [e["data"]["change"] for e in told] == ["start", "expire"]
    assert told[1]["data"]["until"] == until and told[1]["data"]["actor"] == "tmdns"


async def test_of_several_api_processes_one_removes_an_expired_override(
    tm: Tmdns,
) -> None:
    await tm.ok("POST", "/zones", ZONE)
    await tm.ok("POST", "/zones/tm.example./profiles", WEB)
    await tm.ok("PATCH", A, {"override": {"state": "down", "until": time.time() + 0.5}})
    await tm.wait_for(lambda: _snapshot_has_override(tm), limit=3)
    store: SqlStore = tm.run.store  # type: ignore[assignment]
    # Four processes' loops whose clocks are past `until` (tmdns's own is not yet).
    later = time.time() + 31
    racing = [OverrideExpiry(store, tm.run.holder.get, lambda: later) for _ in range(4)]
    changed = await asyncio.gather(*(r.expire_once() for r in racing))
    assert sorted(changed) == [0, 0, 0, 1]
    await tm.wait_for(lambda: _cleared(tm), limit=3)
    # (told as "end": the database's clock has not reached `until` yet)
    assert [e["data"]["change"] for e in await _overrides(tm)] == ["start", "end"]


async def _answer_is(tm: Tmdns, expected: list[str]) -> bool:
    return await tm.addresses("web.tm.example.") == expected


async def _cleared(tm: Tmdns) -> bool:
    return bool((await tm.ok("GET", A))["override"] is None)


async def _snapshot_has_override(tm: Tmdns) -> bool:
    for zone in tm.run.snapshot().config.zones:
        for profile in zone.profiles:
            if any(e.override for e in profile.endpoints):
                return True
    return False
