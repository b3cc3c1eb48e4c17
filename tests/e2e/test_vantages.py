"""Two probers, two views: real `tmdns serve --role prober` processes with
their own vantage names and source addresses (127.0.0.21 and 127.0.0.22)
probe one HTTP target that answers 200 to the first and 503 to the second,
on PostgreSQL, with an API and a DNS process beside them. The quorum decides
what DNS answers; killing a prober makes its vantage stale, and it stops
voting; started again, it votes again."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from app.domain.vantages import VANTAGE_STALE_AFTER
from tests.support.fleet import Fleet, wait_until
from tests.support.ports import free_port
from tests.support.postgres import PostgresServer
from tests.support.sample import ZONE

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]

PROFILES = "/zones/tm.example./profiles"
SEES_UP = {"eu": "127.0.0.21", "us": "127.0.0.22"}  # eu gets 200, us gets 503
PRIMARY, BACKUP = "127.0.0.1", "127.0.0.2"
QUORUMS = ("any", "majority", "all")


class _BySource(BaseHTTPRequestHandler):
    """200 to a probe from eu's address, 503 to any other."""

    def do_GET(self) -> None:
        status = 200 if self.client_address[0] == SEES_UP["eu"] else 503
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def target() -> Iterator[int]:
    server = ThreadingHTTPServer((PRIMARY, free_port()), _BySource)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def profile(quorum: str, port: int) -> dict[str, Any]:
    monitor = {
        "protocol": "http",
        "port": port,
        "interval": 1,
        "timeout": 0.5,
        "tolerated_failures": 0,
        "quorum": quorum,
    }
    return {
        "name": quorum,
        "method": "priority",
        "monitor": monitor,
        "endpoints": [
            {"name": "primary", "address": PRIMARY, "priority": 1},
            {
                "name": "backup",
                "address": BACKUP,
                "priority": 2,
                "monitor": {"protocol": "none"},
            },
        ],
    }


@pytest.fixture
def fleet(postgres: PostgresServer, tmp_path: Path, target: int) -> Iterator[Fleet]:
    url = postgres.create_database(f"tmdns_vantages_{free_port()}")
    with Fleet(tmp_path / "fleet", url, refresh_interval=0.2) as running:
        running.migrate()
        running.add("api", "api", wait=False)
        running.add("dns", "dns", wait=False)
        for name, source in SEES_UP.items():
            env = {
                "TMDNS_PROBER__VANTAGE": name,
                "TMDNS_PROBER__SOURCE_ADDRESS": source,
            }
            running.add(name, "prober", env=env, wait=False)
        for member in running.members.values():
            member.wait_up()
        api = running["api"].api
        api.ok("POST", "/zones", ZONE)
        for quorum in QUORUMS:
            api.ok("POST", PROFILES, profile(quorum, target))
        try:
            yield running
        except BaseException:
            print(running.logs())
            raise


def answers(fleet: Fleet) -> dict[str, list[str] | None]:
    dns = fleet["dns"]
    return {q: dns.addresses(f"{q}.tm.example.") for q in QUORUMS}


def views(fleet: Fleet, quorum: str) -> dict[str, dict[str, Any]]:
    body = fleet["api"].api.ok("GET", f"{PROFILES}/{quorum}/health").body
    primary = next(e for e in body["endpoints"] if e["name"] == "primary")
    return {v["vantage"]: v for v in primary["vantages"]}


def both_voted(fleet: Fleet) -> bool:
    """Every profile's primary has a decisive view from each vantage (before
    that, the first vantage to report decides alone)."""
    return all(
        {n: v["state"] for n, v in views(fleet, q).items()}
        == {"eu": "online", "us": "offline"}
        for q in QUORUMS
    )


def test_the_quorum_decides_over_both_vantages_and_a_killed_one_stops_voting(
    fleet: Fleet,
) -> None:
    wait_until(lambda: both_voted(fleet), 20, 0.2, "a view from each vantage")
    both = {"any": [PRIMARY], "majority": [PRIMARY], "all": [BACKUP]}
    wait_until(lambda: answers(fleet) == both, 2, 0.1, "answers by quorum")

    seen = views(fleet, "any")
    assert {n: (v["state"], v["voting"]) for n, v in seen.items()} == {
        "eu": ("online", True),
        "us": ("offline", True),
    }
    assert "HTTP 200" in seen["eu"]["reason"]
    assert "HTTP 503" in seen["us"]["reason"]
    health = fleet["api"].api.ok("GET", f"{PROFILES}/all/health").body
    primary = next(e for e in health["endpoints"] if e["name"] == "primary")
    assert primary["quorum"] == "all"
    assert primary["reason"].startswith("1 of 2 vantages up (all): eu: HTTP 200")
    vantages = fleet["api"].api.ok("GET", "/vantages").body
    assert [(v["name"], v["voting"], v["source"]) for v in vantages] == [
        ("eu", True, "127.0.0.21"),
        ("us", True, "127.0.0.22"),
    ]
    assert (
        fleet["eu"].metrics()[
            'tmdns_vantage_view{endpoint="primary",profile="any",vantage="eu",'
            'zone="tm.example."}'
        ]
        == 1
    )

    # A quorum changed over the API is probed again at once and reaches DNS
    # within a couple of seconds (a probe, a 0.2 s write, a 0.2 s refresh).
    fleet["api"].api.ok("PATCH", f"{PROFILES}/all", {"monitor": {"quorum": "any"}})
    wait_until(lambda: answers(fleet)["all"] == [PRIMARY], 3, 0.1, "all → any in DNS")
    fleet["api"].api.ok("PATCH", f"{PROFILES}/all", {"monitor": {"quorum": "all"}})
    wait_until(lambda: answers(fleet) == both, 3, 0.1, "any → all in DNS")

    # The vantage that saw it up dies: once stale it no longer votes, and
    # what is left (503 from us) decides.
    fleet["eu"].kill()
    alone = {"any": [BACKUP], "majority": [BACKUP], "all": [BACKUP]}
    wait_until(
        lambda: answers(fleet) == alone,
        VANTAGE_STALE_AFTER + 10,
        0.2,
        "answers once eu is stale",
    )
    assert not views(fleet, "any")["eu"]["voting"]
    listed = {v["name"]: v for v in fleet["api"].api.ok("GET", "/vantages").body}
    assert (listed["eu"]["stale"], listed["eu"]["voting"]) == (True, False)
    assert (listed["us"]["stale"], listed["us"]["voting"]) == (False, True)
    assert "vantage eu stale" in fleet["us"].log_text()

    # Back: its view counts again from its first heartbeat.
    fleet["eu"].start()
    wait_until(lambda: answers(fleet) == both, 20, 0.2, "answers with eu back")
    assert views(fleet, "majority")["eu"]["voting"]
