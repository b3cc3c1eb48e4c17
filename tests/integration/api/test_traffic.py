"""A profile's traffic per minute (GET …/traffic) and the token's scope
(GET /whoami): real DNS queries to a running tmdns, counted by the DNS
process, written by its traffic loop, read back through the API."""

from __future__ import annotations

import itertools
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import dns.edns
import pytest

from app.domain.tokens import Scope, Token, digest_of
from app.store.sql import SqlStore
from app.store.traffic import minute_of
from tests.support.faults import FaultyStore
from tests.support.sample import ZONE
from tests.support.tmdns import Tmdns, started_tmdns

WEB = {
    "name": "web",
    "method": "weighted",
    "monitor": {"protocol": "none"},
    "endpoints": [
        {"name": "big", "address": "127.0.0.10", "weight": 3},
        {"name": "small", "address": "127.0.0.11", "weight": 1},
    ],
}
TRAFFIC = "/zones/tm.example./profiles/web/traffic"


@pytest.fixture
async def counted(db_url: str) -> AsyncIterator[Tmdns]:
    """tmdns adding its counts every 0.2 s, with the profile `web`."""
    async with started_tmdns(
        db_url, dns={"listen": "127.0.0.1:0", "traffic_interval": 0.2}
    ) as tm:
        await tm.ok("POST", "/zones", ZONE)
        await tm.ok("POST", "/zones/tm.example./profiles", WEB)
        yield tm


async def _ask(tm: Tmdns, times: int, tcp: bool = False) -> Counter[str]:
    """Query web.tm.example. `times` times; how often each address came back."""
    seen: Counter[str] = Counter()
    for _ in range(times):
        reply = await tm.query("web.tm.example.", tcp=tcp)
        seen.update(rd.to_text() for rrset in reply.answer for rd in rrset)
    return seen


async def _totals(tm: Tmdns) -> tuple[int, dict[str, int]]:
    body = await tm.ok("GET", TRAFFIC + "?minutes=5")
    answers: Counter[str] = Counter()
    for minute in body["minutes"]:
        answers.update(minute["answers"])
    return sum(m["queries"] for m in body["minutes"]), dict(answers)


def _reached(tm: Tmdns, queries: int) -> Callable[[], Any]:
    async def check() -> bool:
        return (await _totals(tm))[0] >= queries

    return check


async def test_queries_and_the_answer_split_reach_the_api_as_answered(
    counted: Tmdns,
) -> None:
    tm = counted
    await tm.wait_for(lambda: _resolves(tm), limit=3)
    seen = await _ask(tm, 40) + await _ask(tm, 10, tcp=True)
    await tm.wait_for(_reached(tm, 51), limit=5)
    queries, answers = await _totals(tm)
    # One query came from _resolves; each reply carries one address.
    assert queries == 51
    assert answers["big"] + answers["small"] == 51
    assert (
        answers["big"] >= seen["127.0.0.10"] and answers["small"] >= seen["127.0.0.11"]
    )
    assert answers["big"] > answers["small"]  # weights 3:1, seed fixed


async def _resolves(tm: Tmdns) -> bool:
    return bool(await tm.addresses("web.tm.example."))


async def test_every_minute_of_the_window_is_listed_oldest_first(
    counted: Tmdns,
) -> None:
    tm = counted
    before = minute_of(time.time())
    body = await tm.ok("GET", TRAFFIC + "?minutes=30")
    after = minute_of(time.time())
    assert body["profile"] == "web.tm.example."
    ats = [m["at"] for m in body["minutes"]]
    assert len(ats) == 30 and ats == sorted(ats)
    assert {b - a for a, b in itertools.pairwise(ats)} == {60}
    assert before <= ats[-1] <= after
    assert body["minutes"][0] == {
        "at": ats[0],
        "queries": 0,
        "answers": {"big": 0, "small": 0},
    }
    assert len((await tm.ok("GET", TRAFFIC))["minutes"]) == 60  # the default


@pytest.mark.parametrize("minutes", ["0", "1441", "ten"])
async def test_a_window_out_of_range_is_refused_naming_minutes(
    counted: Tmdns, minutes: str
) -> None:
    status, body = await counted.call("GET", f"{TRAFFIC}?minutes={minutes}")
    assert status == 422
    assert [d["field"] for d in body["error"]["details"]] == ["minutes"]


async def test_an_unknown_profile_has_no_traffic(counted: Tmdns) -> None:
    status, body = await counted.call("GET", "/zones/tm.example./profiles/nope/traffic")
    assert status == 404 and body["error"]["code"] == "not_found"


async def test_whoami_names_the_token_and_its_scope(counted: Tmdns) -> None:
    tm = counted
    assert await tm.ok("GET", "/whoami") == {"name": "bootstrap", "scope": "write"}
    secret = "a-read-only-token-for-dashboards"
    await tm.run.store.create_token(
        Token("grafana", Scope.READ, digest_of(secret)), actor="test"
    )
    assert await tm.call("GET", "/whoami", token=secret) == (
        200,
        {"name": "grafana", "scope": "read"},
    )
    assert (await tm.call("GET", "/whoami", token="wrong"))[0] == 401


async def test_counts_a_failed_write_kept_are_added_once_it_works(
    tmp_path: Path,
) -> None:
    """The traffic loop's write fails (the loop is restarted, as every loop):
    nothing answered in the meantime is lost or counted twice."""
    opened: list[FaultyStore] = []

    def open_store(url: str) -> Any:
        manager = FaultyStore.open(url)

        class Keeping:
            async def __aenter__(self) -> SqlStore:
                store = await manager.__aenter__()
                opened.append(store)
                return store

            async def __aexit__(self, *exc: object) -> None:
                await manager.__aexit__(*exc)

        return Keeping()

    url = f"sqlite:///{tmp_path}/t.db"
    async with started_tmdns(
        url,
        open_store=open_store,
        dns={"listen": "127.0.0.1:0", "traffic_interval": 0.2},
    ) as tm:
        await tm.ok("POST", "/zones", ZONE)
        await tm.ok("POST", "/zones/tm.example./profiles", WEB)
        await tm.wait_for(lambda: _resolves(tm), limit=3)
        await tm.wait_for(_reached(tm, 1), limit=5)
        opened[0].arm("add_traffic")
        await _ask(tm, 20)
        status = tm.run.supervisor.loops["traffic"]
        await tm.wait_for(_restarted(status), limit=5)
        await tm.wait_for(_reached(tm, 21), limit=5)
        assert (await _totals(tm))[0] == 21


def _restarted(status: Any) -> Callable[[], Any]:
    async def check() -> bool:
        return bool(status.restarts == 1)

    return check


async def test_metrics_count_queries_answers_paths_and_client_countries(
    counted: Tmdns,
) -> None:
    """What Prometheus scrapes from the DNS process: the ECS subnet places a
    client (the bundled GeoIP data puts 81.2.69.0/24 in GB); loopback
    sources are "unknown"."""
    tm = counted
    await tm.wait_for(lambda: _resolves(tm), limit=3)
    ecs = dns.edns.ECSOption("81.2.69.0", 24)
    for _ in range(5):
        await tm.query("web.tm.example.", use_edns=0, options=[ecs])
    await tm.query("nowhere.tm.example.", tcp=True)
    async with tm.http.get(tm.base.removesuffix("/api/v1") + "/metrics") as r:
        text = await r.text()
    samples = [
        parse_sample(line)
        for line in text.splitlines()
        if line.startswith("tmdns_dns_")
    ]

    def total(family: str, **labels: str) -> float:
        return sum(
            v
            for name, given, v in samples
            if name == family and labels.items() <= given.items()
        )

    web = {"zone": "tm.example.", "profile": "web"}
    assert total("tmdns_dns_queries_total", **web, qtype="A", rcode="NOERROR") == 6
    assert total("tmdns_dns_queries_total", rcode="NXDOMAIN", profile="") == 1
    assert total("tmdns_dns_answers_total", **web) == 6
    assert total("tmdns_dns_client_queries_total", country="GB") == 5
    # The one over TCP, and whatever else a loopback client asked.
    unknown = total("tmdns_dns_client_queries_total", country="unknown")
    assert unknown >= 1
    assert total("tmdns_dns_replies_total", transport="tcp") >= 1
    assert total("tmdns_dns_replies_total") == 5 + unknown


def parse_sample(line: str) -> tuple[str, dict[str, str], float]:
    """`name{a="x",b="y"} 3.0` → (name, labels, value)."""
    head, _, value = line.rpartition(" ")
    name, _, rest = head.partition("{")
    labels = dict(
        (k, v.strip('"'))
        for k, _, v in (pair.partition("=") for pair in rest.rstrip("}").split(","))
        if k
    )
    return name, labels, float(value)
