"""A SIP client's view of tmdns: SRV lookup, RFC 2782 ordering, then addresses.

The client is an ordinary dnspython stub resolver pointed at tmdns. It asks for
`_sip._udp.<profile>` and `_sip._tls.<profile>`, orders the targets as RFC 2782
says (lowest priority first; within one priority, a weighted random pick),
resolves each target's A and AAAA, and ends with the (address, port) pairs it
would try in turn. Failover is then real: a probed listener goes away.
"""

import time
from random import Random

import dns.asyncresolver
import dns.rdtypes.IN.SRV
import dns.resolver
import pytest

from tests.support.listeners import listening
from tests.support.ports import free_port
from tests.support.sample import APP, ZONE
from tests.support.tmdns import Tmdns

pytestmark = [pytest.mark.e2e]

Attempt = tuple[str, int]  # (address, port)


class SipClient:
    def __init__(self, dns_port: int, rng: Random) -> None:
        self.resolver = dns.asyncresolver.Resolver(configure=False)
        self.resolver.nameservers = ["127.0.0.1"]
        self.resolver.port = dns_port
        self.resolver.timeout = 2.0
        self.resolver.lifetime = 4.0
        self.rng = rng

    async def targets(self, service: str) -> list[tuple[str, int]]:
        """SRV targets with their ports, in the order RFC 2782 says to try them."""
        answer = await self.resolver.resolve(service, "SRV")
        return [
            (rd.target.to_text(), rd.port) for rd in rfc2782_order(answer, self.rng)
        ]

    async def addresses(self, host: str) -> list[str]:
        found = []
        for rtype in ("A", "AAAA"):
            answer = await self.resolver.resolve(host, rtype, raise_on_no_answer=False)
            found += sorted(rd.to_text() for rd in answer.rrset or ())
        return found

    async def attempts(self, service: str) -> list[Attempt]:
        """Every (address, port) the client would try for `service`, in order."""
        tries = []
        for host, port in await self.targets(service):
            tries += [(address, port) for address in await self.addresses(host)]
        return tries


def rfc2782_order(
    records: dns.resolver.Answer, rng: Random
) -> list[dns.rdtypes.IN.SRV.SRV]:
    """RFC 2782 "Usage rules": by ascending priority; within one priority, pick
    with probability proportional to weight until none is left. Records with
    weight 0 go first in the list, so they are picked only when drawn at 0."""
    ordered = []
    for priority in sorted({rd.priority for rd in records}):
        group = sorted(
            (rd for rd in records if rd.priority == priority),
            key=lambda rd: (rd.weight != 0, rd.target.to_text()),
        )
        while group:
            draw = rng.randint(0, sum(rd.weight for rd in group))
            running = 0
            for i, rd in enumerate(group):
                running += rd.weight
                if running >= draw:
                    ordered.append(group.pop(i))
                    break
    return ordered


async def create_zone(tm: Tmdns) -> None:
    await tm.ok("POST", "/zones", ZONE)


async def endpoint_state(tm: Tmdns, profile: str, endpoint: str) -> str:
    path = f"/zones/tm.example/profiles/{profile}/endpoints/{endpoint}"
    return str((await tm.ok("GET", path))["state"])


async def test_a_sip_client_tries_targets_in_rfc2782_order(tm: Tmdns) -> None:
    await create_zone(tm)
    await tm.ok(
        "POST",
        "/zones/tm.example/profiles",
        APP,
    )
    # A weighted trunk: 3:1, and one endpoint listening on its own port.
    await tm.ok(
        "POST",
        "/zones/tm.example/profiles",
        {
            "name": "trunk",
            "method": "weighted",
            "monitor": {"protocol": "none"},
            "srv": [{"service": "_sip._udp", "port": 5060}],
            "endpoints": [
                {"name": "heavy", "address": "127.0.0.11", "weight": 3},
                {"name": "light", "address": "127.0.0.12", "weight": 1, "port": 5080},
            ],
        },
    )
    client = SipClient(tm.run.dns_port, Random(1234))

    async def served() -> bool:
        return await tm.addresses("trunk.tm.example.") != []

    await tm.wait_for(served, limit=5.0)

    # Priority: a strict failover order, the same every time.
    for _ in range(3):
        assert await client.attempts("_sip._udp.app.tm.example.") == [
            ("127.0.0.1", 5060),
            ("127.0.0.2", 5060),
            ("::1", 5060),
        ]
    assert await client.attempts("_sip._tls.app.tm.example.") == [
        ("127.0.0.1", 5061),
        ("127.0.0.2", 5061),
        ("::1", 5061),
    ]

    # Weighted: both targets at one priority, each tried once per attempt list,
    # the heavy one first most of the time.
    service = "_sip._udp.trunk.tm.example."
    heavy, light = ("127.0.0.11", 5060), ("127.0.0.12", 5080)
    client = SipClient(tm.run.dns_port, Random(1234))
    runs = [await client.attempts(service) for _ in range(200)]
    assert all(sorted(run) == [heavy, light] for run in runs)
    heavy_first = sum(run[0] == heavy for run in runs) / len(runs)
    # RFC 2782 draws from 0..sum inclusive, and `heavy` sorts first: (3+1)/(4+1).
    assert 0.7 < heavy_first < 0.9, heavy_first
    # The same seed gives the same order: a client's choices are reproducible.
    again = SipClient(tm.run.dns_port, Random(1234))
    assert [await again.attempts(service) for _ in range(20)] == runs[:20]


async def test_a_sip_client_stops_being_offered_a_dead_primary(tm: Tmdns) -> None:
    await create_zone(tm)
    port = free_port()
    client = SipClient(tm.run.dns_port, Random(1234))
    service = "_sip._udp.sip.tm.example."
    async with listening(port):
        await tm.ok(
            "POST",
            "/zones/tm.example/profiles",
            {
                "name": "sip",
                "method": "priority",
                "monitor": {
                    "protocol": "tcp",
                    "port": port,
                    "interval": 1,
                    "timeout": 0.5,
                    "tolerated_failures": 1,
                },
                "srv": [{"service": "_sip._udp", "port": 5060}],
                "endpoints": [
                    {"name": "primary", "address": "127.0.0.1"},
                    {
                        "name": "secondary",
                        "address": "127.0.0.2",
                        "monitor": {"protocol": "none"},
                    },
                ],
            },
        )

        async def primary_online() -> bool:
            return await endpoint_state(tm, "sip", "primary") == "online"

        await tm.wait_for(primary_online, limit=3.0, every=0.1)
        assert await client.attempts(service) == [
            ("127.0.0.1", 5060),
            ("127.0.0.2", 5060),
        ]
    closed_at = time.monotonic()

    async def primary_withdrawn() -> bool:
        return await client.attempts(service) == [("127.0.0.2", 5060)]

    await tm.wait_for(primary_withdrawn, limit=3.0, every=0.1)
    assert time.monotonic() - closed_at < 3.0
    assert await tm.addresses("sip.tm.example.", "A") == ["127.0.0.2"]
    assert await endpoint_state(tm, "sip", "primary") == "offline"
