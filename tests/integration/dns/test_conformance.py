"""DNS protocol conformance of a running tmdns, seen from the wire.

A real tmdns on loopback, its zone built over the HTTP API, queried with
dnspython, with raw bytes for what dnspython will not build, and with dig and
kdig. Each test checks something an operator or a resolver would notice: EDNS
(RFC 6891), truncation, TCP (RFC 7766), case, empty non-terminals (RFC 8020),
ANY (RFC 8482), opcodes, malformed input, SRV (RFC 2782), the apex, Client
Subnet (RFC 7871) and CNAMEs for host endpoints.

Every address used is loopback; 192.0.2.0/24, 2001:db8::/32 and
`edge.cdn.example.` only travel inside packets and are never contacted.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
import shutil
import time
from collections.abc import AsyncIterator
from random import Random
from typing import Any

import aiohttp
import dns.edns
import dns.flags
import dns.message
import dns.opcode
import dns.rcode
import dns.rdatatype
import dns.rrset
import pytest

from app.runtime import running
from app.settings import DnsSettings
from app.store import migrate
from tests.conftest import require
from tests.support import dnsclient as raw
from tests.support import tmdns as support
from tests.support.sample import APP, ZONE
from tests.support.tmdns import Tmdns

pytestmark = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)

TRANSPORTS = ["udp", "tcp"]
V4 = "127.0.0.1"
V6 = "::1"
APP_TARGETS = [  # SRV priority, target, its address record
    (1, "primary.app.tm.example.", "A", "127.0.0.1"),
    (2, "secondary.app.tm.example.", "A", "127.0.0.2"),
    (3, "six.app.tm.example.", "AAAA", "::1"),
]
BIG_COUNT = 40
BIG = {  # its SRV answer is far larger than 1232 octets
    "name": "big",
    "method": "weighted",
    "monitor": {"protocol": "none"},
    "srv": [{"service": "_sip._udp", "port": 5060}],
    "endpoints": [
        {
            "name": f"big-endpoint-with-a-long-name-{i:02d}",
            "address": f"127.0.1.{i + 1}",
            "weight": i % 5 + 1,
        }
        for i in range(BIG_COUNT)
    ],
}
MID_COUNT = 6
MID = {  # its SRV answer fits in 512 octets, its additional section does not
    "name": "mid",
    "method": "weighted",
    "monitor": {"protocol": "none"},
    "srv": [{"service": "_sip._udp", "port": 5060}],
    "endpoints": [
        {"name": f"mid-endpoint-with-a-long-name-{i}", "address": f"127.0.2.{i + 1}"}
        for i in range(MID_COUNT)
    ],
}
CDN = {
    "name": "cdn",
    "method": "priority",
    "monitor": {"protocol": "none"},
    "endpoints": [{"name": "edge", "kind": "host", "target": "edge.cdn.example."}],
}
BIG_SRV = "_sip._udp.big.tm.example."
MID_SRV = "_sip._udp.mid.tm.example."


# --- servers and zone ---------------------------------------------------------


@contextlib.asynccontextmanager
async def tmdns_with(db_url: str, **dns_settings: Any) -> AsyncIterator[Tmdns]:
    """A tmdns like `started_tmdns`, with DNS settings of our own."""
    settings = support.test_settings(db_url)
    dns_settings.setdefault("listen", ["127.0.0.1:0"])
    settings = settings.model_copy(update={"dns": DnsSettings(**dns_settings)})
    await asyncio.to_thread(migrate.upgrade, db_url)
    async with (
        running(settings, rng=Random(1234)) as run,
        aiohttp.ClientSession() as http,
    ):
        yield Tmdns(run, http, f"http://127.0.0.1:{run.api_port}/api/v1")


async def build_zone(tm: Tmdns, *profiles: dict[str, Any]) -> Tmdns:
    """The zone and its profiles over HTTP; returns once DNS answers for all."""
    await tm.ok("POST", "/zones", ZONE)
    for profile in profiles:
        await tm.ok("POST", "/zones/tm.example/profiles", profile)

    async def ready() -> bool:
        for profile in profiles:
            reply = await tm.query(f"{profile['name']}.tm.example.", "A", tcp=True)
            if not reply.answer:
                return False
        if BIG in profiles:
            reply = await tm.query(BIG_SRV, "SRV", tcp=True)
            return sum(len(rrset) for rrset in reply.answer) == BIG_COUNT
        return True

    await tm.wait_for(ready, limit=2.0)
    return tm


@pytest.fixture
async def served(tm: Tmdns) -> Tmdns:
    """The test zone with every profile, on the `tm` server."""
    return await build_zone(tm, APP, BIG, MID, CDN)


@pytest.fixture
async def dual(db_url: str) -> AsyncIterator[Tmdns]:
    """A tmdns listening on 127.0.0.1 and on ::1 (dns[0] and dns[1])."""
    async with tmdns_with(db_url, listen=["127.0.0.1:0", "[::1]:0"]) as tm:
        yield await build_zone(tm, APP)


# --- queries ------------------------------------------------------------------


def make(
    qname: str, rtype: str | int = "A", payload: int | None = None, **kw: Any
) -> dns.message.Message:
    """A query; with EDNS version 0 and this payload size if `payload` is given."""
    if payload is not None:
        kw.setdefault("use_edns", 0)
        kw["payload"] = payload
    return dns.message.make_query(qname, rtype, **kw)


async def exchange(
    tm: Tmdns, wire: bytes, transport: str = "udp", host: str = V4, port: int = 0
) -> bytes:
    """The raw reply to a raw query; fails if none comes."""
    port = port or tm.run.dns_port
    if transport == "tcp":
        return await raw.tcp_exchange(host, port, wire)
    reply = await raw.udp_exchange(host, port, wire)
    assert reply is not None, "no UDP reply"
    return reply


async def ask(
    tm: Tmdns,
    qname: str,
    rtype: str | int = "A",
    transport: str = "udp",
    **kw: Any,
) -> dns.message.Message:
    query = make(qname, rtype, **kw)
    reply = dns.message.from_wire(await exchange(tm, query.to_wire(), transport))
    assert reply.id == query.id
    return reply


def texts(reply: dns.message.Message) -> list[str]:
    return sorted(rd.to_text() for rrset in reply.answer for rd in rrset)


def soa_only(section: list[dns.rrset.RRset]) -> bool:
    return [(r.name.to_text(), r.rdtype) for r in section] == [
        ("tm.example.", dns.rdatatype.SOA)
    ]


def srv_targets(reply: dns.message.Message) -> list[str]:
    return sorted(rd.target.to_text() for rrset in reply.answer for rd in rrset)


async def assert_still_answers(tm: Tmdns, transport: str = "udp") -> None:
    reply = await ask(tm, "app.tm.example.", transport=transport)
    assert reply.rcode() == dns.rcode.NOERROR
    assert texts(reply) == ["127.0.0.1"]


# --- 1. EDNS0 (RFC 6891) ------------------------------------------------------


async def test_edns_query_gets_opt_version_0_with_payload_1232_plain_gets_none(
    served: Tmdns,
) -> None:
    for transport in TRANSPORTS:
        for payload in (512, 1232, 4096):
            reply = await ask(
                served, "app.tm.example.", transport=transport, payload=payload
            )
            assert reply.edns == 0 and reply.payload == 1232, (transport, payload)
            assert texts(reply) == ["127.0.0.1"]
        plain = await ask(served, "app.tm.example.", transport=transport)
        assert plain.edns == -1, transport
        assert texts(plain) == ["127.0.0.1"]


@pytest.mark.parametrize("payload", [None, 256, 600, 1232, 4096])
async def test_udp_reply_never_exceeds_the_client_payload_size(
    served: Tmdns, payload: int | None
) -> None:
    """512 without EDNS; else the client's size, below 512 read as 512 (RFC 6891
    §6.2.5), capped by our 1232. What fits is sent whole; what does not loses
    whole RRsets from the additional section, or is sent empty with TC."""
    limit = 512 if payload is None else min(max(payload, 512), 1232)
    for qname in (BIG_SRV, MID_SRV, "_sip._udp.app.tm.example."):
        query = make(qname, "SRV", payload=payload)
        wire = await exchange(served, query.to_wire(), "udp")
        full_wire = await exchange(served, query.to_wire(), "tcp")
        reply, full = dns.message.from_wire(wire), dns.message.from_wire(full_wire)
        assert len(wire) <= limit, (qname, payload, len(wire))
        if len(full_wire) <= limit:
            assert not reply.flags & dns.flags.TC, (qname, payload)
            assert reply.answer == full.answer and reply.additional == full.additional
        elif reply.flags & dns.flags.TC:
            assert reply.answer == [] and reply.additional == []
        else:
            assert reply.answer == full.answer
            assert all(rrset in full.additional for rrset in reply.additional)
        assert (reply.edns == 0) == (payload is not None)


async def test_edns_version_1_gets_badvers_with_an_opt_of_version_0(
    served: Tmdns,
) -> None:
    for transport in TRANSPORTS:
        query = make("app.tm.example.", use_edns=1)
        wire = await exchange(served, query.to_wire(), transport)
        reply = dns.message.from_wire(wire)
        assert reply.rcode() == dns.rcode.BADVERS  # 16: upper bits in the OPT record
        assert raw.rcode_of(wire) == 0
        assert reply.edns == 0
        assert reply.answer == [] and reply.authority == [] and reply.additional == []


async def test_unknown_edns_options_are_ignored_and_not_echoed(served: Tmdns) -> None:
    options = [
        dns.edns.GenericOption(65001, b"\x01\x02\x03"),  # local/experimental use
        dns.edns.GenericOption(65534, b""),
        dns.edns.GenericOption(dns.edns.NSID, b""),  # no NSID configured here
        dns.edns.GenericOption(dns.edns.COOKIE, b"\x01" * 8),  # answered, not echoed
    ]
    for transport in TRANSPORTS:
        reply = await ask(
            served, "app.tm.example.", transport=transport, use_edns=0, options=options
        )
        assert reply.rcode() == dns.rcode.NOERROR
        assert texts(reply) == ["127.0.0.1"]
        # Only our own COOKIE comes back: the client's, with a server cookie.
        assert reply.edns == 0
        [cookie] = reply.options
        assert cookie.otype == dns.edns.COOKIE
        assert cookie.to_wire()[:8] == b"\x01" * 8 and len(cookie.to_wire()) == 24


async def test_do_bit_is_copied_into_the_reply(served: Tmdns) -> None:
    """RFC 3225 §3: "The DO bit of the query MUST be copied in the response"
    (even by a server that does not sign, as tmdns)."""
    for transport in TRANSPORTS:
        for want_dnssec in (True, False):
            reply = await ask(
                served, "app.tm.example.", transport=transport, want_dnssec=want_dnssec
            )
            assert texts(reply) == ["127.0.0.1"]
            assert bool(reply.ednsflags & dns.flags.DO) == want_dnssec, transport


QUESTION = raw.question("app.tm.example.")
BAD_OPT = {
    "two OPT records": raw.header(ar=2) + QUESTION + raw.opt() + raw.opt(),
    "OPT in the answer section": raw.header(an=1) + QUESTION + raw.opt(),
    "OPT in the authority section": raw.header(ns=1) + QUESTION + raw.opt(),
    "OPT owned by a name": raw.header(ar=1)
    + QUESTION
    + raw.opt(owner=raw.name("app.tm.example.")),
    "OPT owned by a pointer to a name": raw.header(ar=1)
    + QUESTION
    + raw.opt(owner=b"\xc0\x0c"),
}


@pytest.mark.parametrize("wire", BAD_OPT.values(), ids=BAD_OPT.keys())
async def test_misplaced_or_duplicate_opt_is_formerr(
    served: Tmdns, wire: bytes
) -> None:
    well_formed = raw.header(ar=1) + QUESTION + raw.opt()
    good = dns.message.from_wire(await exchange(served, well_formed))
    assert good.rcode() == dns.rcode.NOERROR and texts(good) == ["127.0.0.1"]
    for transport in TRANSPORTS:
        reply = await exchange(served, wire, transport)
        assert raw.id_of(reply) == 0x1234 and raw.flags_of(reply) & 0x8000
        assert raw.rcode_of(reply) == dns.rcode.FORMERR, transport
    await assert_still_answers(served)


# --- 2. truncation ------------------------------------------------------------


async def test_big_srv_over_udp_is_sent_empty_with_tc(served: Tmdns) -> None:
    for payload in (None, 1232, 4096):
        query = make(BIG_SRV, "SRV", payload=payload)
        wire = await exchange(served, query.to_wire(), "udp")
        reply = dns.message.from_wire(wire)
        assert reply.flags & dns.flags.TC, payload
        assert reply.rcode() == dns.rcode.NOERROR
        assert reply.question == query.question
        assert reply.answer == [] and reply.authority == [] and reply.additional == []
        assert len(wire) <= (512 if payload is None else 1232)


async def test_big_srv_over_tcp_returns_every_record(served: Tmdns) -> None:
    endpoints: list[dict[str, Any]] = BIG["endpoints"]  # type: ignore[assignment]
    for payload in (None, 1232):
        query = make(BIG_SRV, "SRV", payload=payload)
        wire = await exchange(served, query.to_wire(), "tcp")
        reply = dns.message.from_wire(wire)
        assert len(wire) > 1232
        assert not reply.flags & dns.flags.TC and reply.flags & dns.flags.AA
        [srv] = reply.answer
        assert len(srv) == BIG_COUNT
        assert srv_targets(reply) == sorted(
            f"{e['name']}.big.tm.example." for e in endpoints
        )
        addresses = {r.name.to_text(): r[0].to_text() for r in reply.additional}
        assert addresses == {
            f"{e['name']}.big.tm.example.": e["address"] for e in endpoints
        }


async def test_answer_that_fits_without_its_additional_section_is_sent_without_tc(
    served: Tmdns,
) -> None:
    for payload in (None, 600):
        limit = 512 if payload is None else payload
        query = make(MID_SRV, "SRV", payload=payload)
        full_wire = await exchange(served, query.to_wire(), "tcp")
        full = dns.message.from_wire(full_wire)
        assert len(full_wire) > limit and len(full.additional) == MID_COUNT  # premise
        wire = await exchange(served, query.to_wire(), "udp")
        reply = dns.message.from_wire(wire)
        assert len(wire) <= limit
        assert not reply.flags & dns.flags.TC  # RFC 2181 §9: not for additional data
        assert reply.answer == full.answer and len(reply.answer[0]) == MID_COUNT
        for rrset in reply.additional:  # whatever additional data is kept is whole
            assert rrset in full.additional


# --- 3. TCP (RFC 7766) --------------------------------------------------------


async def test_tcp_many_queries_on_one_connection(served: Tmdns) -> None:
    names = ["app.tm.example.", "primary.app.tm.example.", "nothing.tm.example."]
    async with raw.tcp_client(V4, served.run.dns_port) as client:
        for i in range(60):
            query = make(names[i % 3])
            reply = dns.message.from_wire(await client.exchange(query.to_wire()))
            assert reply.id == query.id
            expected = dns.rcode.NXDOMAIN if i % 3 == 2 else dns.rcode.NOERROR
            assert reply.rcode() == expected


async def test_tcp_pipelined_queries_are_all_answered(served: Tmdns) -> None:
    queries = {}
    for i in range(20):
        qname = ["app.tm.example.", "tm.example.", BIG_SRV, "nothing.tm.example."][
            i % 4
        ]
        rtype = ["A", "SOA", "SRV", "A"][i % 4]
        query = make(qname, rtype)
        query.id = 1000 + i
        queries[query.id] = query
    stream = b"".join(
        len(w).to_bytes(2, "big") + w for w in (q.to_wire() for q in queries.values())
    )
    async with raw.tcp_client(V4, served.run.dns_port) as client:
        await client.send_raw(stream)  # all 20 at once, before reading any answer
        replies = [dns.message.from_wire(await client.receive()) for _ in queries]
    assert sorted(r.id for r in replies) == sorted(queries)
    for reply in replies:
        assert reply.question == queries[reply.id].question
        assert reply.rcode() in (dns.rcode.NOERROR, dns.rcode.NXDOMAIN)
        if reply.question[0].rdtype == dns.rdatatype.SRV:
            assert len(reply.answer[0]) == BIG_COUNT  # TCP: never truncated


async def test_tcp_length_and_message_may_arrive_in_pieces(served: Tmdns) -> None:
    first, second = make("app.tm.example."), make("primary.app.tm.example.")
    stream = b"".join(
        len(w).to_bytes(2, "big") + w for w in (first.to_wire(), second.to_wire())
    )
    first_end = 2 + len(first.to_wire())
    # byte by byte through the first length, then 5-byte pieces; one piece carries
    # the end of the first message and the first octet of the second length
    cuts = [0, 1, 2, *range(7, len(stream), 5), first_end + 1, len(stream)]
    cuts = sorted(set(cuts))
    async with raw.tcp_client(V4, served.run.dns_port) as client:
        for start, end in itertools.pairwise(cuts):
            await client.send_raw(stream[start:end])
            await asyncio.sleep(0.005)
        one = dns.message.from_wire(await client.receive())
        two = dns.message.from_wire(await client.receive())
    assert (one.id, texts(one)) == (first.id, ["127.0.0.1"])
    assert (two.id, texts(two)) == (second.id, ["127.0.0.1"])


async def over(client: raw.TcpClient, qname: str, rtype: str = "A") -> list[str]:
    """The answer texts to one query on an open TCP connection."""
    query = make(qname, rtype)
    reply = dns.message.from_wire(await client.exchange(query.to_wire()))
    assert reply.id == query.id
    return texts(reply)


async def test_tcp_idle_connection_is_closed_after_the_idle_timeout(
    db_url: str,
) -> None:
    async with tmdns_with(db_url, tcp_idle_timeout=0.5) as tm:
        await build_zone(tm, APP)
        port = tm.run.dns_port
        async with raw.tcp_client(V4, port) as silent:
            opened = time.monotonic()
            assert not await silent.closed_by_server(timeout=0.3)  # not too early
            assert await silent.closed_by_server(timeout=2.0)  # never asked: closed
            assert 0.45 <= time.monotonic() - opened <= 2.0
        async with raw.tcp_client(V4, port) as busy:
            # a client that asks every 0.3 s is never idle for 0.5 s
            for _ in range(4):
                assert await over(busy, "app.tm.example.") == ["127.0.0.1"]
                await asyncio.sleep(0.3)
            assert await over(busy, "primary.app.tm.example.") == ["127.0.0.1"]
            went_idle = time.monotonic()
            assert await busy.closed_by_server(timeout=3.0)
            assert 0.45 <= time.monotonic() - went_idle <= 2.0


async def test_tcp_connection_cap_closes_the_idlest_connection(db_url: str) -> None:
    """At the cap, a new client is served and the connection that has waited
    longest since it last asked is closed to make room (RFC 7766 §6.2.3)."""
    async with tmdns_with(db_url, max_tcp_connections=3) as tm:
        await build_zone(tm, APP)
        port = tm.run.dns_port
        async with contextlib.AsyncExitStack() as stack:
            clients = [
                await stack.enter_async_context(raw.tcp_client(V4, port))
                for _ in range(3)
            ]
            for client in clients:  # each is accepted; clients[0] asked first
                assert await over(client, "app.tm.example.") == ["127.0.0.1"]
            async with raw.tcp_client(V4, port) as fourth:
                assert await over(fourth, "app.tm.example.") == ["127.0.0.1"]
                assert await clients[0].closed_by_server(timeout=2.0)
                for client in clients[1:]:  # the others still work
                    assert await over(client, "app.tm.example.") == ["127.0.0.1"]
            assert texts(await ask(tm, "app.tm.example.")) == ["127.0.0.1"]  # UDP too


async def test_tcp_client_stalled_mid_message_blocks_nobody(served: Tmdns) -> None:
    port = served.run.dns_port
    async with raw.tcp_client(V4, port) as stalled:
        await stalled.send_raw((100).to_bytes(2, "big") + bytes(10))  # 90 never come
        await asyncio.sleep(0.05)
        for transport in TRANSPORTS:
            started = time.monotonic()
            await assert_still_answers(served, transport)
            assert time.monotonic() - started < 1.0
        async with raw.tcp_client(V4, port) as other:
            for _ in range(5):
                assert await over(other, "app.tm.example.") == ["127.0.0.1"]
        assert not await stalled.closed_by_server(timeout=0.1)  # and no reply either


# --- 4. case ------------------------------------------------------------------


async def test_question_case_comes_back_byte_exact_and_matching_ignores_case(
    served: Tmdns,
) -> None:
    for transport in TRANSPORTS:
        for qname, rtype in [
            ("ApP.Tm.ExAmPlE.", "A"),
            ("APP.TM.EXAMPLE.", "A"),
            ("_SIP._Udp.aPp.tm.EXAMPLE.", "SRV"),
            ("Six.App.Tm.Example.", "AAAA"),
            ("NoThInG.tm.example.", "A"),
        ]:
            query = make(qname, rtype)
            sent = query.to_wire()
            wire = await exchange(served, sent, transport)
            # the question, byte for byte
            assert wire[12 : len(sent)] == sent[12:], qname
            reply = dns.message.from_wire(wire)
            lower = await ask(served, qname.lower(), rtype, transport)
            assert reply.rcode() == lower.rcode()
            assert texts(reply) == texts(lower)
        assert texts(await ask(served, "ApP.Tm.ExAmPlE.", transport=transport)) == [
            "127.0.0.1"
        ]


async def test_names_outside_the_zone_are_refused(served: Tmdns) -> None:
    for qname in ("xtm.example.", "example.", "tm.example.com.", "."):
        for transport in TRANSPORTS:
            reply = await ask(served, qname, transport=transport)
            assert reply.rcode() == dns.rcode.REFUSED
            assert not reply.flags & dns.flags.AA
            assert reply.answer == [] and reply.authority == []


# --- 5. empty non-terminals (RFC 8020) ----------------------------------------


async def test_empty_non_terminal_is_nodata_and_a_missing_name_nxdomain(
    served: Tmdns,
) -> None:
    for transport in TRANSPORTS:
        for ent in (
            "_udp.app.tm.example.",
            "_tls.app.tm.example.",
            "_udp.big.tm.example.",
        ):
            for rtype in ("A", "SRV", "TXT"):
                reply = await ask(served, ent, rtype, transport)
                assert reply.rcode() == dns.rcode.NOERROR, (ent, rtype)
                assert reply.flags & dns.flags.AA
                assert reply.answer == [] and soa_only(reply.authority)
        for missing in (
            "nothing.tm.example.",
            "_tcp.app.tm.example.",
            "x._udp.app.tm.example.",
            "x.primary.app.tm.example.",
        ):
            reply = await ask(served, missing, "A", transport)
            assert reply.rcode() == dns.rcode.NXDOMAIN, missing
            assert reply.flags & dns.flags.AA
            assert reply.answer == [] and soa_only(reply.authority)


# --- 6. ANY and types tmdns does not serve -------------------------------------


async def test_any_gets_the_rfc8482_minimal_answer(served: Tmdns) -> None:
    for transport in TRANSPORTS:
        for qname in ("app.tm.example.", "tm.example.", "_sip._udp.app.tm.example."):
            reply = await ask(served, qname, "ANY", transport)
            assert reply.rcode() == dns.rcode.NOERROR and reply.flags & dns.flags.AA
            [rrset] = reply.answer
            assert rrset.rdtype == dns.rdatatype.HINFO and rrset.name.to_text() == qname
            [hinfo] = rrset
            assert (hinfo.cpu, hinfo.os) == (b"RFC8482", b"")


async def test_types_not_served_get_nodata_with_the_soa(served: Tmdns) -> None:
    for rtype in ("TXT", "MX", "CAA", 65280):
        for qname in ("app.tm.example.", "tm.example.", "primary.app.tm.example."):
            for transport in TRANSPORTS:
                reply = await ask(served, qname, rtype, transport)
                assert reply.rcode() == dns.rcode.NOERROR, (qname, rtype)
                assert reply.flags & dns.flags.AA
                assert reply.answer == [] and soa_only(reply.authority)
                assert reply.authority[0].ttl == 60


# --- 7. opcodes and responses -------------------------------------------------


@pytest.mark.parametrize(
    "opcode",
    [dns.opcode.NOTIFY, dns.opcode.UPDATE, dns.opcode.STATUS, 6],
    ids=["NOTIFY", "UPDATE", "STATUS", "DSO"],
)
async def test_other_opcodes_get_notimp_with_only_qr_and_the_opcode(
    served: Tmdns, opcode: int
) -> None:
    rd, ad, cd = 0x0100, 0x0020, 0x0010
    flags = opcode << 11 | rd | ad | cd  # none of them may come back
    for edns in (False, True):
        extra = raw.opt() if edns else b""
        wire = (
            raw.header(qid=0x5151, flags=flags, ar=int(edns))
            + raw.question("tm.example.", 6)
            + extra
        )
        for transport in TRANSPORTS:
            reply = await exchange(served, wire, transport)
            assert raw.id_of(reply) == 0x5151
            assert raw.flags_of(reply) == 0x8000 | opcode << 11 | dns.rcode.NOTIMP, (
                transport,
                hex(raw.flags_of(reply)),
            )


async def test_a_response_gets_no_reply(served: Tmdns) -> None:
    response = bytearray(make("app.tm.example.").to_wire())
    response[2] |= 0x80  # QR: this is a response, not a query
    assert await raw.udp_exchange(V4, served.run.dns_port, bytes(response), 0.3) is None
    query = make("app.tm.example.")
    async with raw.tcp_client(V4, served.run.dns_port) as client:
        await client.send(bytes(response))
        reply = dns.message.from_wire(await client.exchange(query.to_wire()))
        assert reply.id == query.id  # the first reply on the stream is the query's
    await assert_still_answers(served)


# --- 8. malformed input -------------------------------------------------------


def _long_name(last: int) -> bytes:
    """Three labels of 63, one of `last`, then tm.example.: 205 + `last` octets."""
    return b"".join(bytes([63]) + b"a" * 63 for _ in range(3)) + (
        bytes([last]) + b"b" * last + raw.name("tm.example.")
    )


A_IN = b"\x00\x01\x00\x01"
MALFORMED = {
    "no question": raw.header(qd=0),
    "question count past the end": raw.header(qd=1),
    "two questions": raw.header(qd=2) + QUESTION + QUESTION,
    "answer count past the end": raw.header(an=2) + QUESTION,
    "authority count past the end": raw.header(ns=1) + QUESTION,
    "additional count past the end": raw.header(ar=3) + QUESTION + raw.opt(),
    "counts of 65535": raw.header(qd=1, an=0xFFFF, ns=0xFFFF, ar=0xFFFF) + QUESTION,
    "question cut short": raw.header() + QUESTION[:-2],
    "name runs past the end": raw.header() + b"\x05ab",
    "pointer to itself": raw.header() + b"\xc0\x0c" + A_IN,
    "pointer loop through a label": raw.header() + b"\x01a\xc0\x0c" + A_IN,
    "forward pointer": raw.header() + b"\xc0\x0e\x01a\x00" + A_IN,
    "pointer past the end": raw.header() + b"\xc0\xff" + A_IN,
    "pointer cut short": raw.header() + b"\x01a\xc0",
    "pointer loop in a record owner": raw.header(ar=1)
    + QUESTION
    + (0xC000 | 12 + len(QUESTION)).to_bytes(2, "big")  # a pointer to itself
    + b"\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x00",
    "label of 64 octets": raw.header() + b"\x40" + b"a" * 64 + b"\x00" + A_IN,
    "label of 127 octets": raw.header() + b"\x7f" + b"a" * 127 + b"\x00" + A_IN,
    "reserved label type 0b10": raw.header() + b"\x80" + b"a" * 10 + b"\x00" + A_IN,
    "name of 256 octets": raw.header() + _long_name(51) + A_IN,
    "name over 255 octets through a pointer": raw.header(ar=1)
    + _long_name(50)  # 255 octets, at offset 12
    + A_IN
    + b"\x01x\xc0\x0c"  # x + that name: 257 octets
    + b"\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04\x7f\x00\x00\x01",
    "record data past the end": raw.header(ar=1) + QUESTION + raw.a_record()[:-2],
    "EDNS option past the end of its OPT": raw.header(ar=1)
    + QUESTION
    + raw.opt(options=b"\xfd\xe9\x00\x0a\x01\x02"),
}


@pytest.mark.parametrize("wire", MALFORMED.values(), ids=MALFORMED.keys())
async def test_malformed_query_gets_formerr(served: Tmdns, wire: bytes) -> None:
    for transport in TRANSPORTS:
        reply = await exchange(served, wire, transport)
        assert raw.id_of(reply) == 0x1234
        assert raw.flags_of(reply) & 0x8000
        assert raw.rcode_of(reply) == dns.rcode.FORMERR, transport
        await assert_still_answers(served, transport)


async def test_name_of_exactly_255_octets_is_answered(served: Tmdns) -> None:
    name = _long_name(50)
    assert len(name) == 255
    for transport in TRANSPORTS:
        wire = await exchange(served, raw.header() + name + A_IN, transport)
        assert raw.rcode_of(wire) == dns.rcode.NXDOMAIN
        assert wire[12 : 12 + 255] == name


async def test_a_header_shorter_than_12_octets_gets_silence_or_formerr(
    served: Tmdns,
) -> None:
    port = served.run.dns_port
    short = [raw.header()[:length] for length in range(12)]
    sentinel = make("app.tm.example.")
    sentinel.id = 0xFFFF
    replies, answered = await raw.udp_batch(V4, port, short, sentinel.to_wire())
    assert answered == 1
    assert all(raw.rcode_of(reply) == dns.rcode.FORMERR for reply in replies)
    for wire in short:
        async with raw.tcp_client(V4, port) as client:
            await client.send(wire)
            await client.send(sentinel.to_wire())
            reply = await client.receive()
            if raw.id_of(reply) != sentinel.id:  # an answer to the short one
                assert raw.rcode_of(reply) == dns.rcode.FORMERR
                reply = await client.receive()
            assert texts(dns.message.from_wire(reply)) == ["127.0.0.1"]


def _random_packets(rng: Random, count: int) -> list[bytes]:
    packets = []
    for index in range(count):
        data = bytearray(rng.randbytes(rng.randrange(0, 80)))
        if len(data) >= 2:
            data[0:2] = index.to_bytes(2, "big")
        packets.append(bytes(data))
    return packets


def _check_garbage_reply(packet: bytes, reply: bytes) -> None:
    """A reply to garbage is a reply: its ID, QR set, and never SERVFAIL (which
    would mean an exception inside). A query (QR clear, opcode QUERY) without
    exactly one question is FORMERR; another opcode is NOTIMP or FORMERR."""
    assert len(reply) >= 12 and raw.flags_of(reply) & 0x8000
    assert len(packet) >= 12 and not raw.flags_of(packet) & 0x8000
    assert reply[:2] == packet[:2]
    rcode = raw.rcode_of(reply)
    assert rcode != dns.rcode.SERVFAIL
    opcode = (raw.flags_of(packet) >> 11) & 0xF
    if opcode != 0:
        assert rcode in (dns.rcode.NOTIMP, dns.rcode.FORMERR)
    elif int.from_bytes(packet[4:6], "big") != 1:
        assert rcode == dns.rcode.FORMERR


async def test_random_bytes_over_udp_get_formerr_or_silence(served: Tmdns) -> None:
    packets = _random_packets(Random(1234), 400)
    by_id = {p[:2]: p for p in packets if len(p) >= 2}
    sentinel = make("app.tm.example.")
    sentinel.id = 0xFFFF
    replies, answered = await raw.udp_batch(
        V4, served.run.dns_port, packets, sentinel.to_wire()
    )
    assert answered == len(packets) // 20, "a query among the garbage went unanswered"
    for reply in replies:
        _check_garbage_reply(by_id[reply[:2]], reply)
    await assert_still_answers(served)


async def test_random_bytes_over_tcp_do_not_end_the_connection(served: Tmdns) -> None:
    rng = Random(4321)
    packets = [p for p in _random_packets(rng, 60) if p]  # length 0 is no message
    async with raw.tcp_client(V4, served.run.dns_port) as client:
        for start in range(0, len(packets), 20):
            batch = packets[start : start + 20]
            query = make("app.tm.example.")
            query.id = 0xFFFF
            for packet in batch:
                await client.send(packet)
            await client.send(query.to_wire())
            for _ in range(len(batch) + 1):  # bounded: one reply at most per message
                reply = await client.receive()
                if reply[:2] == b"\xff\xff" and len(reply) >= 12:
                    break
                _check_garbage_reply(
                    next(p for p in batch if p[:2] == reply[:2]), reply
                )
            assert texts(dns.message.from_wire(reply)) == ["127.0.0.1"]
    await assert_still_answers(served, "tcp")


async def test_unframed_garbage_on_tcp_stalls_only_its_own_connection(
    served: Tmdns,
) -> None:
    port = served.run.dns_port
    async with raw.tcp_client(V4, port) as garbage:
        await garbage.send_raw(b"GET / HTTP/1.1\r\nHost: tm.example\r\n\r\n")
        for transport in TRANSPORTS:  # a new connection, and UDP, still answer
            await assert_still_answers(served, transport)


# --- 9. SRV (RFC 2782) --------------------------------------------------------


@pytest.mark.parametrize(
    ("service", "port"), [("_sip._udp", 5060), ("_sip._tls", 5061)]
)
async def test_priority_srv_lists_the_endpoints_in_order_with_their_addresses(
    served: Tmdns, service: str, port: int
) -> None:
    qname = f"{service}.app.tm.example."
    for transport in TRANSPORTS:
        reply = await ask(served, qname, "SRV", transport)
        assert reply.rcode() == dns.rcode.NOERROR and reply.flags & dns.flags.AA
        assert not reply.flags & dns.flags.TC
        [srv] = reply.answer
        assert srv.name.to_text() == qname and srv.ttl == 60
        records = sorted((rd.priority, rd.port, rd.target.to_text()) for rd in srv)
        assert records == [(p, port, target) for p, target, _, _ in APP_TARGETS]
        additional = {
            (rrset.name.to_text(), dns.rdatatype.to_text(rrset.rdtype)): rrset
            for rrset in reply.additional
        }
        assert sorted(additional) == sorted(
            (t, rtype) for _, t, rtype, _ in APP_TARGETS
        )
        for _, target, rtype, address in APP_TARGETS:
            glue = additional[(target, rtype)]
            assert [rd.to_text() for rd in glue] == [address] and glue.ttl == 60
            direct = await ask(served, target, rtype, transport)
            assert direct.rcode() == dns.rcode.NOERROR and direct.flags & dns.flags.AA
            assert direct.answer == [glue] and direct.answer[0].ttl == glue.ttl
            other = "AAAA" if rtype == "A" else "A"
            nodata = await ask(served, target, other, transport)
            assert nodata.rcode() == dns.rcode.NOERROR and nodata.answer == []


async def test_weighted_srv_shares_one_priority_and_carries_the_weights(
    served: Tmdns,
) -> None:
    reply = await ask(served, BIG_SRV, "SRV", "tcp")
    [srv] = reply.answer
    assert srv.ttl == 60
    assert len({rd.priority for rd in srv}) == 1
    endpoints: list[dict[str, Any]] = BIG["endpoints"]  # type: ignore[assignment]
    weights = {rd.target.to_text(): rd.weight for rd in srv}
    assert weights == {f"{e['name']}.big.tm.example.": e["weight"] for e in endpoints}
    assert {rd.port for rd in srv} == {5060}


async def test_disabling_an_endpoint_removes_it_from_srv_within_one_second(
    served: Tmdns,
) -> None:
    qname = "_sip._udp.app.tm.example."
    everyone = [target for _, target, _, _ in APP_TARGETS]
    assert srv_targets(await ask(served, qname, "SRV")) == sorted(everyone)
    path = "/zones/tm.example/profiles/app/endpoints/secondary"
    started = time.monotonic()
    await served.ok("PATCH", path, {"enabled": False})

    async def gone() -> bool:
        return "secondary.app.tm.example." not in srv_targets(
            await ask(served, qname, "SRV")
        )

    await served.wait_for(gone, limit=1.0)
    assert time.monotonic() - started < 1.0
    reply = await ask(served, qname, "SRV")
    assert sorted((rd.priority, rd.target.to_text()) for rd in reply.answer[0]) == [
        (1, "primary.app.tm.example."),
        (3, "six.app.tm.example."),
    ]
    assert "secondary.app.tm.example." not in {
        r.name.to_text() for r in reply.additional
    }
    await served.ok("PATCH", path, {"enabled": True})

    async def back() -> bool:
        return srv_targets(await ask(served, qname, "SRV")) == sorted(everyone)

    await served.wait_for(back, limit=1.0)


# --- 10. the zone apex --------------------------------------------------------


async def test_soa_serial_increases_after_a_configuration_change(served: Tmdns) -> None:
    before = await ask(served, "tm.example.", "SOA")
    assert before.flags & dns.flags.AA
    [soa] = before.answer[0]
    assert soa.mname.to_text() == "ns1.tm.example."
    await served.ok(
        "PATCH", "/zones/tm.example/profiles/app/endpoints/secondary", {"weight": 7}
    )

    async def moved() -> bool:
        reply = await ask(served, "tm.example.", "SOA")
        return bool(reply.answer[0][0].serial > soa.serial)

    await served.wait_for(moved, limit=1.0)
    for transport in TRANSPORTS:
        after = await ask(served, "tm.example.", "SOA", transport)
        assert after.answer[0][0].serial > soa.serial


async def test_ns_answer_carries_the_glue_and_the_name_server_answers_directly(
    served: Tmdns,
) -> None:
    for transport in TRANSPORTS:
        reply = await ask(served, "tm.example.", "NS", transport)
        assert reply.rcode() == dns.rcode.NOERROR and reply.flags & dns.flags.AA
        [ns] = reply.answer
        assert [rd.to_text() for rd in ns] == ZONE["ns"]
        glue = [
            (
                r.name.to_text(),
                dns.rdatatype.to_text(r.rdtype),
                [rd.to_text() for rd in r],
            )
            for r in reply.additional
        ]
        assert glue == [("ns1.tm.example.", "A", ["127.0.0.1"])]
        direct = await ask(served, "ns1.tm.example.", "A", transport)
        assert direct.rcode() == dns.rcode.NOERROR and direct.flags & dns.flags.AA
        assert texts(direct) == ["127.0.0.1"]


# --- 11. EDNS Client Subnet (RFC 7871) ----------------------------------------


@pytest.mark.parametrize(
    ("address", "prefix"),
    [
        ("192.0.2.0", 24),
        ("2001:db8::", 56),
        ("0.0.0.0", 0),
        ("::", 0),
        ("192.0.2.7", 32),
    ],
)
async def test_client_subnet_is_echoed_with_scope_zero(
    served: Tmdns, address: str, prefix: int
) -> None:
    sent = dns.edns.ECSOption(address, prefix, 0)
    for qname, rtype in [
        ("app.tm.example.", "A"),
        ("big.tm.example.", "A"),
        ("_sip._udp.app.tm.example.", "SRV"),
        ("nothing.tm.example.", "A"),
    ]:
        for transport in TRANSPORTS:
            reply = await ask(
                served, qname, rtype, transport, use_edns=0, options=[sent]
            )
            assert reply.rcode() in (dns.rcode.NOERROR, dns.rcode.NXDOMAIN)
            [echo] = reply.options
            assert isinstance(echo, dns.edns.ECSOption), echo
            assert (echo.family, echo.srclen, echo.scopelen) == (sent.family, prefix, 0)
            assert echo.address == sent.address
            assert echo.to_wire() == sent.to_wire()
    reply = await ask(served, "app.tm.example.", use_edns=0, options=[sent])
    assert texts(reply) == ["127.0.0.1"]  # priority does not depend on the client


def _ecs_query(ecs_option: bytes) -> bytes:
    return raw.header(ar=1) + QUESTION + raw.opt(options=ecs_option)


BAD_ECS = {
    "IPv4 source prefix 33": raw.ecs(1, 33, 0, bytes([192, 0, 2, 0, 0])),
    "IPv6 source prefix 129": raw.ecs(2, 129, 0, bytes(17)),
    "192.0.2.1/24 with four octets": raw.ecs(1, 24, 0, bytes([192, 0, 2, 1])),
    "bits past the prefix, 192.0.2.0/20": raw.ecs(1, 20, 0, bytes([192, 0, 2])),
    "bits past the prefix, 2001:db8:1::/32": raw.ecs(
        2, 32, 0, bytes.fromhex("20010db80001")
    ),
    "unknown family 3": raw.ecs(3, 24, 0, bytes([192, 0, 2])),
    "address shorter than its prefix": raw.ecs(1, 24, 0, bytes([192, 0])),
    "address longer than its prefix": raw.ecs(1, 16, 0, bytes([192, 0, 2, 0])),
    "option shorter than four octets": raw.option(8, b"\x00\x01\x18"),
}


@pytest.mark.parametrize("ecs_option", BAD_ECS.values(), ids=BAD_ECS.keys())
async def test_invalid_client_subnet_is_formerr(
    served: Tmdns, ecs_option: bytes
) -> None:
    good = _ecs_query(raw.ecs(1, 24, 0, bytes([192, 0, 2])))
    assert raw.rcode_of(await exchange(served, good)) == dns.rcode.NOERROR
    for transport in TRANSPORTS:
        reply = await exchange(served, _ecs_query(ecs_option), transport)
        assert raw.id_of(reply) == 0x1234 and raw.flags_of(reply) & 0x8000
        assert raw.rcode_of(reply) == dns.rcode.FORMERR, transport


# --- 12. host endpoints -------------------------------------------------------


async def test_host_endpoint_answers_with_a_cname_to_its_target(served: Tmdns) -> None:
    for transport in TRANSPORTS:
        for rtype in ("A", "AAAA"):
            reply = await ask(served, "cdn.tm.example.", rtype, transport)
            assert reply.rcode() == dns.rcode.NOERROR and reply.flags & dns.flags.AA
            [cname] = reply.answer
            assert cname.rdtype == dns.rdatatype.CNAME and cname.ttl == 60
            assert cname.name.to_text() == "cdn.tm.example."
            assert [rd.to_text() for rd in cname] == ["edge.cdn.example."]


async def test_host_endpoint_answers_a_cname_query_with_its_cname(
    served: Tmdns,
) -> None:
    """RFC 1034 §3.6.2, §4.3.2: the CNAME is the name's data; asked for it, a
    server returns it."""
    reply = await ask(served, "cdn.tm.example.", "CNAME")
    assert reply.rcode() == dns.rcode.NOERROR
    assert [rd.to_text() for rrset in reply.answer for rd in rrset] == [
        "edge.cdn.example."
    ]


# --- IPv6 loopback --------------------------------------------------------------


async def test_ipv6_loopback_answers_a_aaaa_and_srv(dual: Tmdns) -> None:
    for transport in TRANSPORTS:
        v4_port, v6_port = dual.run.dns[0].port, dual.run.dns[1].port
        for qname, rtype in [
            ("app.tm.example.", "A"),
            ("six.app.tm.example.", "AAAA"),
            ("_sip._udp.app.tm.example.", "SRV"),
            ("nothing.tm.example.", "A"),
        ]:
            query = make(qname, rtype, payload=1232)
            over6 = dns.message.from_wire(
                await exchange(dual, query.to_wire(), transport, V6, v6_port)
            )
            over4 = dns.message.from_wire(
                await exchange(dual, query.to_wire(), transport, V4, v4_port)
            )
            assert over6.id == query.id and over6.flags & dns.flags.AA
            assert over6.rcode() == over4.rcode()
            assert over6.answer == over4.answer and over6.additional == over4.additional
        srv = await exchange(
            dual,
            make("_sip._udp.app.tm.example.", "SRV").to_wire(),
            transport,
            V6,
            v6_port,
        )
        assert srv_targets(dns.message.from_wire(srv)) == sorted(
            t for _, t, _, _ in APP_TARGETS
        )
        a = await exchange(
            dual, make("app.tm.example.").to_wire(), transport, V6, v6_port
        )
        assert texts(dns.message.from_wire(a)) == ["127.0.0.1"]


# --- dig and kdig ---------------------------------------------------------------


def _need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        require(f"{tool} is not installed")
    assert path is not None
    return path


async def dig(port: int, *args: str, server: str = V4) -> str:
    code, out = await raw.run_tool(
        _need("dig"),
        f"@{server}",
        "-p",
        str(port),
        "+norec",
        "+time=2",
        "+tries=1",
        *args,
    )
    assert code == 0, out
    return out


async def kdig(port: int, *args: str, server: str = V4) -> str:
    code, out = await raw.run_tool(
        _need("kdig"),
        f"@{server}",
        "-p",
        str(port),
        "+norec",
        "+timeout=2",
        "+retry=0",
        *args,
    )
    assert code == 0, out
    return out


def header_flags(out: str) -> set[str]:
    match = re.search(r"flags: ([a-z ]*);", out, re.IGNORECASE)
    assert match, out
    return set(match.group(1).split())


def status(out: str) -> str:
    match = re.search(r"status: ([A-Z]+)", out)
    assert match, out
    return match.group(1)


def records(out: str, rtype: str) -> list[list[str]]:
    """The fields of every `<name> <ttl> IN <rtype> …` line."""
    found = []
    for line in out.splitlines():
        fields = line.split()
        if (
            len(fields) >= 4
            and not line.startswith(";")
            and fields[2:4] == ["IN", rtype]
        ):
            found.append(fields)
    return found


async def test_dig_over_udp_and_tcp(served: Tmdns) -> None:
    port = served.run.dns_port
    for transport in ("+notcp", "+tcp"):
        out = await dig(port, transport, "app.tm.example.", "A")
        assert status(out) == "NOERROR" and header_flags(out) == {"qr", "aa"}
        assert records(out, "A") == [["app.tm.example.", "60", "IN", "A", "127.0.0.1"]]
        out = await dig(port, transport, "nothing.tm.example.", "A")
        assert status(out) == "NXDOMAIN" and "AUTHORITY: 1" in out
        assert records(out, "SOA")[0][0] == "tm.example."
    out = await dig(port, "+tcp", BIG_SRV, "SRV")
    assert len(records(out, "SRV")) == BIG_COUNT
    out = await dig(port, "+ignore", "+bufsize=1232", BIG_SRV, "SRV")
    assert header_flags(out) == {"qr", "aa", "tc"} and "ANSWER: 0" in out
    out = await dig(port, BIG_SRV, "SRV")  # dig retries over TCP by itself
    assert "Truncated, retrying in TCP mode" in out
    assert len(records(out, "SRV")) == BIG_COUNT
    out = await dig(port, "app.tm.example.", "ANY")
    assert records(out, "HINFO") == [
        ["app.tm.example.", "3600", "IN", "HINFO", '"RFC8482"', '""']
    ]
    out = await dig(port, "+ednsopt=65001:abcd", "+nocookie", "app.tm.example.", "A")
    assert status(out) == "NOERROR" and "65001" not in out.split("OPT PSEUDOSECTION")[1]


async def test_kdig_over_udp_and_tcp(served: Tmdns) -> None:
    port = served.run.dns_port
    for transport in ("+notcp", "+tcp"):
        out = await kdig(port, transport, "_sip._udp.app.tm.example.", "SRV")
        assert status(out) == "NOERROR" and header_flags(out) == {"qr", "aa"}
        srv = sorted((f[4], f[6], f[7]) for f in records(out, "SRV"))
        assert srv == [(str(p), "5060", t) for p, t, _, _ in APP_TARGETS]
        assert sorted(f[0] for f in records(out, "A") + records(out, "AAAA")) == sorted(
            t for _, t, _, _ in APP_TARGETS
        )
        out = await kdig(
            port, transport, "+subnet=192.0.2.0/24", "app.tm.example.", "A"
        )
        assert "CLIENT-SUBNET: 192.0.2.0/24/0" in out
        assert records(out, "A") == [["app.tm.example.", "60", "IN", "A", "127.0.0.1"]]
        out = await kdig(port, transport, "+edns=1", "app.tm.example.", "A")
        assert status(out) == "BADVERS" and records(out, "A") == []
        out = await kdig(port, transport, "_udp.app.tm.example.", "SRV")
        assert status(out) == "NOERROR" and records(out, "SRV") == []
        assert records(out, "SOA")[0][0] == "tm.example."


async def test_dig_and_kdig_over_ipv6_loopback(dual: Tmdns) -> None:
    port = dual.run.dns[1].port
    for transport in ("+notcp", "+tcp"):
        out = await dig(port, transport, "app.tm.example.", "A", server=V6)
        assert records(out, "A") == [["app.tm.example.", "60", "IN", "A", "127.0.0.1"]]
        out = await kdig(port, transport, "six.app.tm.example.", "AAAA", server=V6)
        assert records(out, "AAAA") == [
            ["six.app.tm.example.", "60", "IN", "AAAA", "::1"]
        ]
