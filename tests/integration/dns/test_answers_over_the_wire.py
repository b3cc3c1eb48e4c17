"""A zone built over HTTP, answered over UDP and TCP to dnspython, on both engines."""

import time
from collections import Counter

import dns.flags
import dns.rcode
import dns.rdatatype
import pytest

from tests.support.tmdns import Tmdns

pytestmark = pytest.mark.postgres
ZONE = {
    "name": "tm.example",
    "ns": ["ns1.tm.example"],
    "glue": {"ns1.tm.example": ["127.0.0.1"]},
}
PRIORITY = {
    "name": "app",
    "method": "priority",
    "monitor": {"protocol": "none"},
    "endpoints": [
        {"name": "primary", "address": "127.0.0.1"},
        {"name": "secondary", "address": "127.0.0.2"},
    ],
}


async def test_priority_answers_the_primary_authoritatively_with_ttl_60(
    tm: Tmdns,
) -> None:
    await tm.ok("POST", "/zones", ZONE)
    await tm.ok("POST", "/zones/tm.example/profiles", PRIORITY)
    await tm.wait_for(lambda: _has_answer(tm, "app.tm.example."), limit=1.0)
    for tcp in (False, True):
        reply = await tm.query("app.tm.example.", tcp=tcp)
        assert reply.flags & dns.flags.AA and not reply.flags & dns.flags.RA
        [rrset] = reply.answer
        assert rrset.ttl == 60
        assert [rd.to_text() for rd in rrset] == ["127.0.0.1"]


async def test_apex_answers_soa_and_ns(tm: Tmdns) -> None:
    await tm.ok("POST", "/zones", ZONE)
    await tm.wait_for(lambda: _has_answer(tm, "tm.example.", "SOA"), limit=1.0)
    soa = (await tm.query("tm.example.", "SOA")).answer[0]
    assert soa[0].mname.to_text() == "ns1.tm.example."
    assert soa[0].rname.to_text() == "hostmaster.tm.example."
    ns = await tm.query("tm.example.", "NS")
    assert [rd.to_text() for rd in ns.answer[0]] == ["ns1.tm.example."]
    assert ns.flags & dns.flags.AA


async def test_disabling_the_primary_moves_the_answer_within_one_second(
    tm: Tmdns,
) -> None:
    await tm.ok("POST", "/zones", ZONE)
    await tm.ok("POST", "/zones/tm.example/profiles", PRIORITY)
    await tm.wait_for(lambda: _answers(tm, "app.tm.example.", ["127.0.0.1"]), limit=1.0)
    serial_before = (await tm.query("tm.example.", "SOA")).answer[0][0].serial
    started = time.monotonic()
    await tm.ok(
        "PATCH", "/zones/tm.example/profiles/app/endpoints/primary", {"enabled": False}
    )
    await tm.wait_for(lambda: _answers(tm, "app.tm.example.", ["127.0.0.2"]), limit=1.0)
    assert time.monotonic() - started < 1.0
    assert (await tm.query("tm.example.", "SOA")).answer[0][0].serial > serial_before


async def test_weighted_answers_follow_3_to_1_weights(tm: Tmdns) -> None:
    await tm.ok("POST", "/zones", ZONE)
    await tm.ok(
        "POST",
        "/zones/tm.example/profiles",
        {
            "name": "web",
            "method": "weighted",
            "monitor": {"protocol": "none"},
            "endpoints": [
                {"name": "blue", "address": "127.0.0.11", "weight": 3},
                {"name": "green", "address": "127.0.0.12", "weight": 1},
            ],
        },
    )
    await tm.wait_for(lambda: _has_answer(tm, "web.tm.example."), limit=1.0)
    counts: Counter[str] = Counter()
    for _ in range(2000):
        counts.update(await tm.addresses("web.tm.example."))
    assert sum(counts.values()) == 2000
    assert counts["127.0.0.11"] / 2000 == pytest.approx(0.75, abs=0.05)


async def test_nxdomain_and_nodata_carry_the_soa_and_outside_is_refused(
    tm: Tmdns,
) -> None:
    await tm.ok("POST", "/zones", ZONE)
    await tm.ok("POST", "/zones/tm.example/profiles", PRIORITY)
    await tm.wait_for(lambda: _has_answer(tm, "app.tm.example."), limit=1.0)
    nx = await tm.query("missing.tm.example.")
    assert nx.rcode() == dns.rcode.NXDOMAIN and nx.flags & dns.flags.AA
    assert [r.rdtype for r in nx.authority] == [dns.rdatatype.SOA]
    assert nx.authority[0].ttl == 60
    nodata = await tm.query("app.tm.example.", "AAAA")
    assert nodata.rcode() == dns.rcode.NOERROR and nodata.answer == []
    assert [r.rdtype for r in nodata.authority] == [dns.rdatatype.SOA]
    for outside in ("www.example.com.", "xtm.example."):
        refused = await tm.query(outside)
        assert refused.rcode() == dns.rcode.REFUSED and not refused.flags & dns.flags.AA


async def _has_answer(tm: Tmdns, name: str, rtype: str = "A") -> bool:
    return bool((await tm.query(name, rtype)).answer)


async def _answers(tm: Tmdns, name: str, expected: list[str]) -> bool:
    return await tm.addresses(name) == expected
