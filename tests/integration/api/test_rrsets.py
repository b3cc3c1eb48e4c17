"""Static rrsets (PUT/GET/DELETE …/rrsets/{name}/{type}) over a running
tmdns, checked with dnspython the way a resolver or an ACME client asks."""

from __future__ import annotations

from typing import Any

import dns.flags
import dns.message
import dns.rcode
import dns.rdatatype

from tests.support.sample import APP, ZONE
from tests.support.tmdns import Tmdns

RRSETS = "/zones/tm.example./rrsets"


async def _answer(tm: Tmdns, name: str, rtype: str) -> list[str]:
    reply = await tm.query(name, rtype)
    return sorted(
        rd.to_text()
        for rrset in reply.answer
        if rrset.rdtype == dns.rdatatype.from_text(rtype)
        for rd in rrset
    )


async def _until(tm: Tmdns, name: str, rtype: str, expected: list[str]) -> float:
    async def check() -> bool:
        return await _answer(tm, name, rtype) == expected

    return await tm.wait_for(check, limit=2)


async def test_an_acme_challenge_is_published_changed_and_removed_in_a_second(
    tm: Tmdns,
) -> None:
    await tm.ok("POST", "/zones", ZONE)
    name = "_acme-challenge.sip.tm.example."
    path = RRSETS + "/_acme-challenge.sip/TXT"
    status, body = await tm.call("PUT", path, {"ttl": 30, "records": ['"token-one"']})
    assert status == 201
    assert body == {
        "name": "_acme-challenge.sip",
        "type": "TXT",
        "ttl": 30,
        "records": ['"token-one"'],
    }
    assert await _until(tm, name, "TXT", ['"token-one"']) < 1.0
    reply = await tm.query(name, "TXT")
    assert reply.flags & dns.flags.AA and reply.answer[0].ttl == 30
    records = {"records": ['"token-two"', '"token-three"']}
    status, _ = await tm.call("PUT", path, records)
    assert status == 200
    await _until(tm, name, "TXT", ['"token-three"', '"token-two"'])
    assert await tm.ok("GET", RRSETS) == [
        {
            "name": "_acme-challenge.sip",
            "type": "TXT",
            "ttl": 60,
            "records": ['"token-two"', '"token-three"'],
        }
    ]
    assert (await tm.call("DELETE", path))[0] == 204

    async def gone() -> bool:
        return (await tm.query(name, "TXT")).rcode() == dns.rcode.NXDOMAIN

    await tm.wait_for(gone, limit=2)
    assert (await tm.call("DELETE", path))[1]["error"]["code"] == "not_found"
    actions = [
        e["action"] for e in await tm.ok("GET", "/audit?resource=tm.example./rrsets")
    ]
    assert sorted(actions) == ["rrset.delete", "rrset.put", "rrset.put"]


KINDS: list[tuple[str, str, list[str], list[str]]] = [
    # path name, type, records as given, as dnspython reads the answer
    (
        "@",
        "MX",
        ["10 mail", "20 mx.example.net."],
        ["10 mail.tm.example.", "20 mx.example.net."],
    ),
    ("@", "CAA", ['0 issue "letsencrypt.org"'], ['0 issue "letsencrypt.org"']),
    ("@", "TXT", ['"v=spf1 -all"'], ['"v=spf1 -all"']),
    ("www", "CNAME", ["app"], ["app.tm.example."]),
    ("mail", "A", ["127.0.0.25"], ["127.0.0.25"]),
    ("mail", "AAAA", ["::1"], ["::1"]),
    ("_sip._udp.static", "SRV", ["10 50 5060 mail"], ["10 50 5060 mail.tm.example."]),
    (
        "static",
        "NAPTR",
        ['10 50 "s" "SIP+D2U" "" _sip._udp.static'],
        ['10 50 "s" "SIP+D2U" "" _sip._udp.static.tm.example.'],
    ),
    ("1.0.0.127.in-addr", "PTR", ["mail.tm.example."], ["mail.tm.example."]),
]


async def test_every_static_type_answers_as_written(tm: Tmdns) -> None:
    await tm.ok("POST", "/zones", ZONE)
    await tm.ok("POST", "/zones/tm.example./profiles", APP)
    for name, rtype, given, _ in KINDS:
        await tm.ok("PUT", f"{RRSETS}/{name}/{rtype}", {"records": given})
    for name, rtype, _, expected in KINDS:
        fqdn = "tm.example." if name == "@" else f"{name}.tm.example."
        await _until(tm, fqdn, rtype, sorted(expected))
    # A CNAME answers every type; the apex keeps its SOA and NS.
    reply = await tm.query("www.tm.example.", "AAAA")
    assert [r.to_text() for r in reply.answer[0]] == ["app.tm.example."]
    assert await _answer(tm, "tm.example.", "NS") == ["ns1.tm.example."]
    # A type the name has no rrset of: NODATA with the SOA.
    reply = await tm.query("mail.tm.example.", "TXT")
    assert reply.rcode() == dns.rcode.NOERROR and not reply.answer
    assert reply.authority[0].rdtype == dns.rdatatype.SOA


BAD: list[tuple[str, dict[str, Any], str, str]] = [
    ("mail/A", {"records": ["300.1.1.1"]}, "records.0", "is not A data"),
    ("mail/MX", {"records": ["10 mail", "mail"]}, "records.1", "is not MX data"),
    ("txt/TXT", {"records": ['"' + "x" * 256 + '"']}, "records.0", "is not TXT data"),
    (
        "mail/A",
        {"records": ["127.0.0.1", "127.0.0.1"]},
        "records.1",
        "repeats records.0",
    ),
    ("mail/A", {"records": []}, "records", "at least 1"),
    ("mail/A", {"ttl": -1, "records": ["127.0.0.1"]}, "ttl", "greater than or equal"),
    ("mail/SOA", {"records": ["x"]}, "type", "is not one of"),
    ("@/CNAME", {"records": ["app"]}, "rrsets", "apex cannot have a CNAME"),
    ("@/NS", {"records": ["ns2.example.net."]}, "rrsets", "the zone's 'ns'"),
    ("app/TXT", {"records": ['"x"']}, "rrsets", "already owned by profile 'app'"),
    ("primary.app/A", {"records": ["127.0.0.1"]}, "rrsets", "endpoint 'primary'"),
    ("ns1/A", {"records": ["127.0.0.1"]}, "rrsets", "name server ns1.tm.example."),
    ("x.other.example./A", {"records": ["127.0.0.1"]}, "name", "not inside"),
]


async def test_a_refused_rrset_names_the_field_and_writes_nothing(
    tm: Tmdns,
) -> None:
    """Every case against one server: each is refused on its own, and none
    leaves an rrset or an audit entry behind."""
    await tm.ok("POST", "/zones", ZONE)
    await tm.ok("POST", "/zones/tm.example./profiles", APP)
    before = await tm.ok("GET", "/audit")
    for path, body, field, words in BAD:
        status, problem = await tm.call("PUT", f"{RRSETS}/{path}", body)
        assert status == 422, (path, problem)
        details = problem["error"]["details"]
        assert [d["field"] for d in details] == [field], (path, details)
        assert words in details[0]["message"], (path, details)
    assert await tm.ok("GET", RRSETS) == []
    assert await tm.ok("GET", "/audit") == before


async def test_cname_stands_alone_and_a_profile_cannot_take_a_static_name(
    tm: Tmdns,
) -> None:
    await tm.ok("POST", "/zones", ZONE)
    await tm.ok("PUT", RRSETS + "/vanity/CNAME", {"records": ["app.tm.example."]})
    status, problem = await tm.call("PUT", RRSETS + "/vanity/TXT", {"records": ['"x"']})
    assert status == 422
    assert "a CNAME has no other records beside it" in problem["error"]["message"]
    status, problem = await tm.call(
        "POST", "/zones/tm.example./profiles", APP | {"name": "vanity"}
    )
    assert status == 422, problem
    assert "vanity.tm.example. is already owned by profile 'vanity'" in str(problem)


async def test_a_delegation_refers_with_glue_and_hides_what_is_below(
    tm: Tmdns,
) -> None:
    await tm.ok("POST", "/zones", ZONE)
    status, problem = await tm.call(
        "PUT", RRSETS + "/child/NS", {"records": ["ns1.child"]}
    )
    assert status == 422 and "add its A or AAAA rrset (glue) first" in str(problem)
    await tm.ok("PUT", RRSETS + "/ns1.child/A", {"records": ["127.0.0.53"]})
    await tm.ok(
        "PUT",
        RRSETS + "/child/NS",
        {"ttl": 3600, "records": ["ns1.child", "ns.example.net."]},
    )

    async def referred() -> bool:
        reply = await tm.query("host.deep.child.tm.example.", "A")
        return bool(reply.authority) and reply.authority[0].rdtype == dns.rdatatype.NS

    await tm.wait_for(referred, limit=2)
    for name in ("child.tm.example.", "x.child.tm.example.", "ns1.child.tm.example."):
        for rtype in ("A", "TXT"):
            reply = await tm.query(name, rtype)
            assert reply.rcode() == dns.rcode.NOERROR, name
            assert not reply.flags & dns.flags.AA and not reply.answer
            [ns] = reply.authority
            assert ns.name.to_text() == "child.tm.example." and ns.ttl == 3600
            assert sorted(r.to_text() for r in ns) == [
                "ns.example.net.",
                "ns1.child.tm.example.",
            ]
            [glue] = reply.additional
            assert glue.name.to_text() == "ns1.child.tm.example."
            assert [r.to_text() for r in glue] == ["127.0.0.53"]
    # The parent answers DS for the cut itself (no DNSSEC here: NODATA).
    reply = await tm.query("child.tm.example.", "DS")
    assert reply.flags & dns.flags.AA and not reply.answer
    # Nothing else may live below the cut.
    status, problem = await tm.call(
        "PUT", RRSETS + "/www.child/A", {"records": ["127.0.0.1"]}
    )
    assert status == 422 and "below the delegation at child.tm.example." in str(problem)
    status, problem = await tm.call(
        "POST", "/zones/tm.example./profiles", APP | {"name": "sip.child"}
    )
    assert status == 422 and "below the delegation" in str(problem)
    # Glue a delegation needs cannot go while it stands.
    status, _ = await tm.call("DELETE", RRSETS + "/ns1.child/A")
    assert status == 422


async def test_static_names_are_answered_from_stored_replies(tm: Tmdns) -> None:
    """The fast path serves them: the replies counter says so."""
    await tm.ok("POST", "/zones", ZONE)
    await tm.ok("PUT", RRSETS + "/@/TXT", {"records": ['"hello"']})
    await _until(tm, "tm.example.", "TXT", ['"hello"'])
    before = await _replies(tm)
    for _ in range(20):
        assert await _answer(tm, "tm.example.", "TXT") == ['"hello"']
    after = await _replies(tm)
    assert after["fast"] - before["fast"] == 20
    assert after["full"] == before["full"]


async def _replies(tm: Tmdns) -> dict[str, float]:
    async with tm.http.get(tm.base.removesuffix("/api/v1") + "/metrics") as r:
        text = await r.text()
    found = {"fast": 0.0, "full": 0.0}
    for line in text.splitlines():
        if line.startswith("tmdns_dns_replies_total{"):
            path = line.split('path="')[1].split('"')[0]
            found[path] += float(line.rpartition(" ")[2])
    return found


async def test_if_match_keeps_two_acme_hooks_from_overwriting_each_other(
    tm: Tmdns,
) -> None:
    await tm.ok("POST", "/zones", ZONE)
    path = RRSETS + "/_acme-challenge/TXT"
    url = tm.base + path
    auth = {"Authorization": "Bearer test-token-with-write-scope"}
    async with tm.http.put(url, json={"records": ['"a"']}, headers=auth) as r:
        assert r.status == 201
        tag = r.headers["ETag"]
    stale = auth | {"If-Match": tag}
    async with tm.http.put(url, json={"records": ['"b"']}, headers=stale) as r:
        assert r.status == 200
    async with tm.http.put(url, json={"records": ['"c"']}, headers=stale) as r:
        assert r.status == 412
    async with tm.http.delete(url, headers=stale) as r:
        assert r.status == 412
    new = tm.base + RRSETS + "/other/TXT"
    async with tm.http.put(new, json={"records": ['"x"']}, headers=stale) as r:
        assert r.status == 412  # a version of something that is not there
    async with tm.http.put(
        url, json={"records": ['"c"']}, headers=auth | {"If-None-Match": "*"}
    ) as r:
        assert r.status == 412  # create only: it exists
    async with tm.http.get(url, headers=auth) as r:
        assert r.status == 200 and r.headers["ETag"] != tag
        assert (await r.json())["records"] == ['"b"']
    [rrset] = await tm.ok("GET", RRSETS)
    assert rrset["records"] == ['"b"']
