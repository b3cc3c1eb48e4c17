"""Every routing method through the running server, asked with `dig +subnet` and
dnspython, decided on a GeoIP database built for the test; explain agrees.

Client addresses here (documentation and private ranges) only travel inside
ECS options to 127.0.0.1; nothing is ever sent to them.
"""

import asyncio
import random
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import dns.edns
import dns.message
import pytest

from tests.conftest import require
from tests.support.mmdb import Place, write_city_db
from tests.support.tmdns import Tmdns, started_tmdns

pytestmark = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)

PLACES = {
    "198.51.100.0/24": Place("EU", "FR", "IDF", 48.86, 2.35),  # Paris
    "203.0.113.0/24": Place("NA", "US", "CA", 37.77, -122.42),  # San Francisco
    "192.0.2.0/24": Place("NA", "US", "NY", 40.71, -74.0),  # New York
    "100.64.0.0/16": Place("OC", "AU", "NSW", -33.87, 151.21),  # Sydney
}
ZONE = {"name": "tm.example", "ns": ["ns.example.net"]}
NONE = {"protocol": "none"}
SIP = [{"service": "_sip._udp", "port": 5060}]
PROFILES = [
    {
        "name": "geo",
        "method": "geographic",
        "monitor": NONE,
        "srv": SIP,
        "endpoints": [
            {"name": "eu", "address": "127.0.1.1", "geo": ["GEO-EU"]},
            {"name": "cal", "address": "127.0.1.2", "geo": ["US-CA"]},
            {"name": "us", "address": "127.0.1.3", "geo": ["US"]},
            {"name": "rest", "address": "127.0.1.4", "geo": ["WORLD"]},
        ],
    },
    {
        "name": "net",
        "method": "subnet",
        "monitor": NONE,
        "srv": SIP,
        "endpoints": [
            {"name": "lan", "address": "127.0.2.1", "subnets": ["10.0.0.0/8"]},
            {
                "name": "range",
                "address": "127.0.2.2",
                "subnets": ["198.51.100.10-198.51.100.20", "2001:db8::/32"],
            },
            {"name": "other", "address": "127.0.2.3"},
        ],
    },
    {
        "name": "perf",
        "method": "performance",
        "monitor": NONE,
        "srv": SIP,
        "endpoints": [
            {"name": "dublin", "address": "127.0.3.1", "location": "aws:eu-west-1"},
            {"name": "virginia", "address": "127.0.3.2", "location": "aws:us-east-1"},
            {
                "name": "sydney",
                "address": "127.0.3.3",
                "location": {"lat": -33.9, "lon": 151.2},
            },
        ],
    },
    {
        "name": "multi",
        "method": "multivalue",
        "monitor": NONE,
        "max_return": 2,
        "srv": SIP,
        "endpoints": [
            {"name": f"m{i}", "address": f"127.0.4.{i}"} for i in range(1, 5)
        ],
    },
]


@pytest.fixture
async def tm(db_url: str, tmp_path: Path) -> AsyncIterator[Tmdns]:
    database = write_city_db(tmp_path / "city.mmdb", PLACES)
    async with started_tmdns(db_url, geoip={"database": str(database)}) as running:
        await running.ok("POST", "/zones", ZONE)
        for profile in PROFILES:
            await running.ok("POST", "/zones/tm.example/profiles", profile)
        await running.wait_for(lambda: _has(running, "multi.tm.example."), limit=1.0)
        yield running


async def _has(tm: Tmdns, name: str) -> bool:
    return bool((await tm.query(name)).answer)


async def ask(tm: Tmdns, name: str, subnet: str, rtype: str = "A"):
    address, _, prefix = subnet.partition("/")
    option = dns.edns.ECSOption(address, int(prefix))
    reply = await tm.query(name, rtype, use_edns=0, options=[option])
    [ecs] = [o for o in reply.options if isinstance(o, dns.edns.ECSOption)]
    records = sorted(rd.to_text() for rrset in reply.answer for rd in rrset)
    return records, ecs.scopelen


@pytest.mark.parametrize(
    ("subnet", "expected", "scope"),
    [
        ("198.51.100.0/24", "127.0.1.1", 24),  # France → GEO-EU
        ("203.0.113.0/24", "127.0.1.2", 24),  # California → US-CA
        ("192.0.2.0/24", "127.0.1.3", 24),  # New York → US
        ("100.64.1.0/24", "127.0.1.4", 16),  # Australia → WORLD, the GeoIP /16
        ("198.51.100.0/25", "127.0.1.1", 24),  # capped? no: GeoIP net is /24
    ],
)
async def test_geographic_most_specific_code_wins(
    tm: Tmdns, subnet: str, expected: str, scope: int
) -> None:
    records, got_scope = await ask(tm, "geo.tm.example.", subnet)
    assert records == [expected]
    assert got_scope == min(scope, int(subnet.split("/")[1]))


async def test_geographic_serves_an_offline_match_unless_geo_failover(
    tm: Tmdns,
) -> None:
    eu = "/zones/tm.example/profiles/geo/endpoints/eu"
    await tm.ok("PATCH", eu, {"override": {"state": "down", "reason": "maintenance"}})
    # forced down = not mapped: France falls through to WORLD
    await tm.wait_for(lambda: _answers(tm, "geo", "198.51.100.0/24", "127.0.1.4"), 1.0)


@pytest.mark.parametrize(
    ("subnet", "expected", "scope"),
    [
        ("10.9.8.0/24", "127.0.2.1", 8),
        ("198.51.100.12/32", "127.0.2.2", 30),  # 12-15 lies inside 10-20
        ("198.51.100.0/24", "127.0.2.3", 24),  # straddles the range: fallback
        ("172.16.0.0/12", "127.0.2.3", 2),  # 128.0.0.0/2 holds no range
        ("2001:db8:1::/48", "127.0.2.2", 32),
    ],
)
async def test_subnet_ranges_and_fallback(
    tm: Tmdns, subnet: str, expected: str, scope: int
) -> None:
    records, got_scope = await ask(tm, "net.tm.example.", subnet)
    assert records == [expected]
    assert got_scope == scope


@pytest.mark.parametrize(
    ("subnet", "expected"),
    [
        ("198.51.100.0/24", "127.0.3.1"),  # Paris → Dublin
        ("192.0.2.0/24", "127.0.3.2"),  # New York → Virginia
        ("100.64.0.0/24", "127.0.3.3"),  # Sydney → Sydney
    ],
)
async def test_performance_picks_the_closest_location(
    tm: Tmdns, subnet: str, expected: str
) -> None:
    assert (await ask(tm, "perf.tm.example.", subnet))[0] == [expected]


async def test_performance_follows_the_latency_table_over_distance(tm: Tmdns) -> None:
    await tm.ok(
        "PUT",
        "/latency",
        {
            "entries": [
                {
                    "network": "198.51.100.0/24",
                    "rtt": {"aws:us-east-1": 20, "aws:eu-west-1": 90},
                },
            ]
        },
    )
    await tm.wait_for(lambda: _answers(tm, "perf", "198.51.100.0/24", "127.0.3.2"), 1.0)
    assert (await tm.ok("GET", "/latency"))["entries"][0][
        "network"
    ] == "198.51.100.0/24"


async def test_performance_srv_ranks_locations_by_proximity(tm: Tmdns) -> None:
    records, _ = await ask(tm, "_sip._udp.perf.tm.example.", "198.51.100.0/24", "SRV")
    ranked = sorted(records)
    assert ranked[0].startswith("1 1 5060 dublin.")
    assert ranked[1].startswith("2 1 5060 virginia.")
    assert ranked[2].startswith("3 1 5060 sydney.")


async def test_geographic_and_subnet_srv_offer_only_the_match(tm: Tmdns) -> None:
    geo, _ = await ask(tm, "_sip._udp.geo.tm.example.", "203.0.113.0/24", "SRV")
    assert [r.split()[3] for r in geo] == ["cal.geo.tm.example."]
    net, _ = await ask(tm, "_sip._udp.net.tm.example.", "10.1.0.0/16", "SRV")
    assert [r.split()[3] for r in net] == ["lan.net.tm.example."]


async def test_multivalue_returns_two_of_four_and_rotates(tm: Tmdns) -> None:
    seen: set[str] = set()
    for _ in range(40):
        records = await tm.addresses("multi.tm.example.")
        assert len(records) == 2 and len(set(records)) == 2
        seen.update(records)
    assert seen == {f"127.0.4.{i}" for i in range(1, 5)}
    srv = (await tm.query("_sip._udp.multi.tm.example.", "SRV")).answer[0]
    assert len(srv) == 2 and {(r.priority, r.weight) for r in srv} == {(10, 1)}


async def test_explain_agrees_with_dns_for_every_method(tm: Tmdns) -> None:
    cases = [
        ("geo", "203.0.113.7"),
        ("geo", "100.64.3.3"),
        ("net", "10.1.2.3"),
        ("net", "198.51.100.15"),
        ("perf", "192.0.2.55"),
        ("perf", "100.64.0.9"),
    ]
    for profile, client in cases:
        name = f"{profile}.tm.example."
        body = await tm.ok("GET", f"/explain?name={name}&type=A&client={client}")
        records, scope = await ask(tm, name, f"{client}/32")
        assert [r["data"] for r in body["answer"]] == records, body["why"]
        assert body["ecs_scope"] == scope
        assert any(
            body["why"][i].startswith("profile") for i in range(len(body["why"]))
        )


async def test_explain_equals_dns_for_random_clients_and_prefixes(tm: Tmdns) -> None:
    """`client` and `prefix` mean what an ECS option means: the first `prefix`
    bits of the address. Seeded, 60 pairs over every client-dependent method
    (the others do not look at the client)."""
    rng = random.Random(20261201)
    networks = ["198.51.100", "203.0.113", "192.0.2", "100.64.3", "10.1.2"]
    for _ in range(60):
        profile = rng.choice(["geo", "net", "perf"])
        client = f"{rng.choice(networks)}.{rng.randrange(256)}"
        prefix = rng.randrange(8, 33)
        name = f"{profile}.tm.example."
        body = await tm.ok(
            "GET", f"/explain?name={name}&type=A&client={client}&prefix={prefix}"
        )
        records, scope = await ask(tm, name, f"{client}/{prefix}")
        case = f"{name} {client}/{prefix}"
        assert [r["data"] for r in body["answer"]] == records, (case, body["why"])
        assert body["ecs_scope"] == scope, case


async def test_dig_with_subnet_gets_the_geographic_answer(tm: Tmdns) -> None:
    if shutil.which("dig") is None:
        require("dig is not installed")
    result = await asyncio.to_thread(
        subprocess.run,
        [
            "dig",
            "@127.0.0.1",
            "-p",
            str(tm.run.dns_port),
            "+subnet=203.0.113.0/24",
            "+short",
            "geo.tm.example.",
            "A",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=10,
    )
    assert result.stdout.split() == ["127.0.1.2"]


async def _answers(tm: Tmdns, profile: str, subnet: str, expected: str) -> bool:
    return (await ask(tm, f"{profile}.tm.example.", subnet))[0] == [expected]


async def test_answers_cached_per_client_block_never_cross_into_the_next(
    tm: Tmdns,
) -> None:
    # The fast path keeps replies per deciding block: asking neighbours in a
    # shuffled order, twice, must give each its own answer every time.
    expected = {
        f"198.51.100.{host}/32": "127.0.2.2" if 10 <= host <= 20 else "127.0.2.3"
        for host in range(32)
    } | {f"10.{octet}.0.0/16": "127.0.2.1" for octet in (0, 1, 255)}
    geo = {
        "198.51.100.0/24": "127.0.1.1",
        "198.51.101.0/24": "127.0.1.4",
        "203.0.113.0/24": "127.0.1.2",
        "203.0.112.0/24": "127.0.1.4",
        "192.0.2.0/24": "127.0.1.3",
    }
    order = [("net", s, a) for s, a in expected.items()]
    order += [("geo", s, a) for s, a in geo.items()]
    order *= 2
    random.Random(3).shuffle(order)
    for name, subnet, address in order:
        records, _ = await ask(tm, f"{name}.tm.example.", subnet)
        assert records == [address], (name, subnet)
