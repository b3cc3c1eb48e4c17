"""NAPTR for SIP over a running tmdns: a caller asking the profile's name
learns its transports, and a transport whose elements fail leaves the
answer within seconds (real TCP listeners, probed on loopback)."""

from __future__ import annotations

import asyncio

import dns.rdatatype

from tests.support.sample import ZONE
from tests.support.tmdns import Tmdns


async def _naptr(tm: Tmdns) -> list[str]:
    reply = await tm.query("sip.tm.example.", "NAPTR")
    return sorted(
        rd.to_text()
        for rrset in reply.answer
        if rrset.rdtype == dns.rdatatype.NAPTR
        for rd in rrset
    )


async def test_a_failed_transport_leaves_the_naptr_answer(tm: Tmdns) -> None:
    udp_side = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    tls_side = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    udp_port = udp_side.sockets[0].getsockname()[1]
    tls_port = tls_side.sockets[0].getsockname()[1]
    monitor = {
        "protocol": "tcp",
        "interval": 1,
        "timeout": 0.5,
        "tolerated_failures": 0,
    }
    await tm.ok("POST", "/zones", ZONE)
    status, body = await tm.call(
        "POST",
        "/zones/tm.example./profiles",
        {
            "name": "sip",
            "method": "priority",
            "monitor": monitor | {"port": udp_port},
            "srv": [
                {"service": "_sip._udp", "port": 5060, "endpoints": ["a"]},
                {"service": "_sips._tcp", "port": 5061, "endpoints": ["tls"]},
            ],
            "naptr": True,
            "endpoints": [
                {"name": "a", "address": "127.0.0.1"},
                {
                    "name": "tls",
                    "address": "127.0.0.1",
                    "monitor": {"port": tls_port},
                },
            ],
        },
    )
    assert status == 201, body
    assert body["naptr"] == [
        {"service": "_sip._udp", "order": 10, "preference": 30},
        {"service": "_sips._tcp", "order": 10, "preference": 10},
    ]
    both = [
        '10 10 "s" "SIPS+D2T" "" _sips._tcp.sip.tm.example.',
        '10 30 "s" "SIP+D2U" "" _sip._udp.sip.tm.example.',
    ]

    async def answers(expected: list[str]) -> bool:
        return await _naptr(tm) == expected

    await tm.wait_for(lambda: answers(both), limit=5)
    tls_side.close()
    await tls_side.wait_closed()
    took = await tm.wait_for(lambda: answers(both[1:]), limit=6)
    assert took < 6
    srv = await tm.query("_sip._udp.sip.tm.example.", "SRV")
    assert [r.target.to_text() for r in srv.answer[0]] == ["a.sip.tm.example."]
    udp_side.close()
    await udp_side.wait_closed()
