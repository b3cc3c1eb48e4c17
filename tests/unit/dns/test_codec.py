"""The reply encoder (app.dns.codec) gives the very bytes dnslib gives for every
record kind, section, header flag, EDNS shape and truncation step; names compress
against the question and echo its letter case; a mailbox with an escaped dot
survives, which dnslib gets wrong, so that case is read back with dnspython."""

from __future__ import annotations

from dataclasses import replace
from ipaddress import ip_address
from random import Random

import dns.flags
import dns.message
import dns.name
import dns.rdata
import dns.rdataclass
import dns.rdatatype
import dns.rrset
import pytest
from dnslib import (
    AAAA,
    CNAME,
    NS,
    RD,
    RR,
    SOA,
    SRV,
    A,
    DNSHeader,
    DNSLabel,
    DNSQuestion,
    DNSRecord,
    EDNSOption,
)

from app.dns import codec
from app.dns.wire import ClientSubnet, Edns, Query, parse_query
from app.domain.answer import Answer
from app.domain.query import Rcode, RType
from app.domain.records import Hinfo, Record, Soa, Srv

NAME = "app.tm.example."
SOA_RECORD = Record(
    "tm.example.",
    RType.SOA,
    60,
    Soa("ns1.tm.example.", "hostmaster.tm.example.", 7, 3600, 600, 604800, 60),
)
RECORDS = {
    "A": Record(NAME, RType.A, 60, ip_address("127.0.0.1")),
    "AAAA": Record(NAME, RType.AAAA, 60, ip_address("2001:db8::1")),
    "CNAME": Record(NAME, RType.CNAME, 60, "sip.carrier.example."),
    "NS": Record("tm.example.", RType.NS, 3600, "ns1.tm.example."),
    "SRV": Record(
        "_sip._udp.app.tm.example.",
        RType.SRV,
        60,
        Srv(10, 50, 5060, "e1.app.tm.example."),
    ),
    "HINFO": Record(NAME, RType.HINFO, 3600, Hinfo("RFC8482", "")),
    "SOA": SOA_RECORD,
}


def dnslib_reply(
    query: Query,
    answer: Answer,
    sections: tuple[tuple[Record, ...], ...],
    extra: codec.Options = (),
    tc: bool = False,
) -> bytes:
    """The reply as dnslib encodes it: the reference the encoder must match."""
    header = DNSHeader(id=query.id, qr=1, opcode=query.opcode, rcode=answer.rcode & 0xF)
    header.aa = int(answer.authoritative)
    header.rd = (query.flags >> 8) & 1
    header.cd = (query.flags >> 4) & 1
    header.tc = int(tc)
    lowered = [label.lower() for label in query.labels]
    message = DNSRecord(
        header, questions=[DNSQuestion(DNSLabel(lowered), query.qtype, query.qclass)]
    )
    adders = (message.add_answer, message.add_auth, message.add_ar)
    for add, section in zip(adders, sections, strict=True):
        for record in section:
            add(_dnslib_rr(record))
    if query.edns is not None:
        options = []
        ecs = query.edns.ecs
        if ecs is not None:
            scope = (
                0 if ecs.source_prefix == 0 else min(answer.scope, ecs.source_prefix)
            )
            data = ecs.family.to_bytes(2, "big") + bytes([ecs.source_prefix, scope])
            options.append(EDNSOption(codec.OPTION_ECS, data + ecs.raw_address))
        options += [EDNSOption(code, data) for code, data in extra]
        ttl = (answer.rcode >> 4) << 24 | (0x8000 if query.edns.do else 0)
        message.add_ar(RR(".", 41, codec.OUR_UDP_PAYLOAD, ttl, options))
    wire = bytearray(message.pack())
    asked = b"".join(bytes([len(x)]) + x for x in query.labels) + b"\x00"
    wire[12 : 12 + len(asked)] = asked
    return bytes(wire)


def _dnslib_rr(record: Record) -> RR:
    rdata = record.rdata
    if isinstance(rdata, Soa):
        times = (rdata.serial, rdata.refresh, rdata.retry, rdata.expire, rdata.minimum)
        data = SOA(rdata.mname, rdata.rname, times)
    elif isinstance(rdata, Srv):
        data = SRV(rdata.priority, rdata.weight, rdata.port, rdata.target)
    elif isinstance(rdata, Hinfo):
        raw = [text.encode() for text in (rdata.cpu, rdata.os)]
        data = RD(b"".join(bytes([len(x)]) + x for x in raw))
    elif record.rtype is RType.A:
        data = A(str(rdata))
    elif record.rtype is RType.AAAA:
        data = AAAA(str(rdata))
    else:
        data = (NS if record.rtype is RType.NS else CNAME)(str(rdata))
    return RR(record.name, int(record.rtype), 1, record.ttl, data)


def make_query(
    name: str = "ApP.tm.EXAMPLE.",
    qtype: int = RType.A,
    edns: Edns | None = None,
    flags: int = 0x0100,
) -> Query:
    labels = tuple(part.encode() for part in name.rstrip(".").split("."))
    return Query(0x1234, flags, 0, name.lower(), labels, qtype, 1, edns)


ECS = ClientSubnet(1, 24, 0, b"\xc6\x33\x64", b"\x00\x01\x18\x00\xc6\x33\x64")
EDNS_SHAPES = {
    "plain": None,
    "edns": Edns(1232, 0, False, None),
    "edns-do": Edns(4096, 0, True, None),
    "ecs": Edns(1232, 0, False, ECS),
}


@pytest.mark.parametrize("edns", EDNS_SHAPES)
@pytest.mark.parametrize("kind", RECORDS)
@pytest.mark.parametrize("section", [0, 1, 2])
def test_each_record_kind_in_each_section_matches_dnslib(kind, section, edns) -> None:
    query = make_query(edns=EDNS_SHAPES[edns])
    sections: list[tuple[Record, ...]] = [(), (), ()]
    sections[section] = (RECORDS[kind], RECORDS["A"])
    answer = Answer(Rcode.NOERROR, *sections, scope=16)
    assert codec.encode(query, answer, None) == dnslib_reply(query, answer, sections)


def test_a_whole_srv_reply_with_glue_and_soa_matches_dnslib() -> None:
    query = make_query("_SIP._udp.App.tm.example.", RType.SRV, EDNS_SHAPES["ecs"])
    targets = [f"e{i}.app.tm.example." for i in range(4)]
    srvs = tuple(
        Record("_sip._udp.app.tm.example.", RType.SRV, 60, Srv(i, 10, 5060, t))
        for i, t in enumerate(targets)
    )
    glue = tuple(
        Record(t, RType.A, 60, ip_address(f"127.0.4.{i}"))
        for i, t in enumerate(targets)
    )
    answer = Answer(Rcode.NOERROR, srvs, (SOA_RECORD,), glue, scope=0)
    extra = ((codec.OPTION_NSID, b"dns-1"), (codec.OPTION_KEEPALIVE, b"\x00\x64"))
    expected = dnslib_reply(query, answer, (srvs, (SOA_RECORD,), glue), extra)
    assert codec.encode(query, answer, None, extra) == expected


@pytest.mark.parametrize(
    ("flags", "rcode", "authoritative"),
    [
        (0x0000, Rcode.NOERROR, True),
        (0x0110, Rcode.NXDOMAIN, True),  # RD and CD are copied
        (0x07B0, Rcode.NOERROR, True),  # AA, TC, RA, Z, AD asked: none copied
        (0x0100, Rcode.REFUSED, False),
    ],
)
def test_header_flags_match_dnslib(flags, rcode, authoritative) -> None:
    query = make_query(flags=flags, edns=EDNS_SHAPES["edns"])
    answer = Answer(rcode, authority=(SOA_RECORD,), authoritative=authoritative)
    expected = dnslib_reply(query, answer, ((), (SOA_RECORD,), ()))
    assert codec.encode(query, answer, None) == expected


def test_badvers_puts_the_upper_rcode_bits_in_the_opt() -> None:
    query = make_query(edns=Edns(1232, 1, False, None))
    expected = dnslib_reply(
        query, Answer(codec.BADVERS, authoritative=False), ((),) * 3
    )
    assert codec.rcode_only(query, codec.BADVERS) == expected


def test_truncation_drops_glue_first_then_sends_an_empty_tc_reply() -> None:
    query = make_query("app.tm.example.", RType.SRV)
    many = tuple(
        Record(NAME, RType.SRV, 60, Srv(1, 1, 5060, f"target-{i}.tm.example."))
        for i in range(10)
    )
    glue = tuple(
        Record(f"target-{i}.tm.example.", RType.A, 60, ip_address(f"127.0.0.{i + 1}"))
        for i in range(10)
    )
    fits_without_glue = Answer(Rcode.NOERROR, many, (), glue)
    full = codec.encode(query, fits_without_glue, None)
    assert len(full) > codec.PLAIN_UDP_LIMIT
    reply = codec.encode(query, fits_without_glue, codec.PLAIN_UDP_LIMIT)
    assert reply == dnslib_reply(query, fits_without_glue, (many, (), ()))
    too_big = Answer(Rcode.NOERROR, many * 3)
    truncated = codec.encode(query, too_big, codec.PLAIN_UDP_LIMIT)
    assert truncated == dnslib_reply(query, too_big, ((), (), ()), tc=True)
    assert dns.message.from_wire(truncated).flags & 0x0200


def test_random_answers_match_dnslib_byte_for_byte() -> None:
    """A seeded mix of record lists and query shapes: the bounded property test."""
    rng = Random(2026)
    kinds = list(RECORDS.values())
    for _ in range(300):
        sections = tuple(
            tuple(rng.choice(kinds) for _ in range(rng.randrange(4))) for _ in range(3)
        )
        query = make_query(
            rng.choice(["app.tm.example.", "APP.TM.EXAMPLE.", "x.App.tm.example."]),
            rng.choice(list(RType)),
            EDNS_SHAPES[rng.choice(list(EDNS_SHAPES))],
            flags=rng.choice([0, 0x0100, 0x0110]),
        )
        answer = Answer(rng.choice(list(Rcode)), *sections, scope=rng.randrange(33))
        assert codec.encode(query, answer, None) == dnslib_reply(
            query, answer, sections
        )


def test_a_mailbox_with_an_escaped_dot_keeps_it() -> None:
    soa = replace(
        SOA_RECORD, rdata=replace(SOA_RECORD.rdata, rname="dns\\.admin.tm.example.")
    )
    wire = codec.encode(make_query(), Answer(Rcode.NXDOMAIN, authority=(soa,)), None)
    parsed = dns.message.from_wire(wire)
    assert parsed.authority[0].rdtype == dns.rdatatype.SOA
    assert parsed.authority[0][0].rname.labels[0] == b"dns.admin"
    assert codec.labels_of("a\\046b.c\\\\d.") == (b"a.b", b"c\\d")


def test_the_reply_parses_back_as_the_question_that_was_asked() -> None:
    wire = codec.encode(
        make_query("MiXeD.tm.example.", edns=EDNS_SHAPES["ecs"]),
        Answer(Rcode.NOERROR, (replace(RECORDS["A"], name="mixed.tm.example."),)),
        None,
    )
    parsed = dns.message.from_wire(wire)
    assert parsed.question[0].name.to_text() == "MiXeD.tm.example."
    assert parsed.answer[0].name.to_text() == "MiXeD.tm.example."
    assert parse_query(wire[:2] + b"\x00\x00" + wire[4:]).qname == "mixed.tm.example."


def test_a_name_sharing_no_suffix_with_the_question_is_written_out() -> None:
    """A CNAME to another top-level domain has nothing to point at: every
    label is written, ending in the root label, as dnslib writes it."""
    cname = Record(NAME, RType.CNAME, 60, "edge.cdn-provider.net.")
    query = make_query(edns=EDNS_SHAPES["edns"])
    answer = Answer(Rcode.NOERROR, (cname,))
    wire = codec.encode(query, answer, None)
    assert wire == dnslib_reply(query, answer, ((cname,), (), ()))
    assert b"\x04edge\x0ccdn-provider\x03net\x00" in wire


def test_the_root_name_as_an_srv_target_is_one_zero_octet() -> None:
    """RFC 2782: the target "." says the service is decidedly not available
    at this name; it goes on the wire as the root label alone."""
    none_here = Record("_sip._udp.app.tm.example.", RType.SRV, 60, Srv(0, 0, 0, "."))
    query = make_query("_sip._udp.app.tm.example.", RType.SRV)
    answer = Answer(Rcode.NOERROR, (none_here,))
    wire = codec.encode(query, answer, None)
    assert wire == dnslib_reply(query, answer, ((none_here,), (), ()))
    assert dns.message.from_wire(wire).answer[0][0].target.to_text() == "."


def test_names_past_the_reach_of_a_pointer_are_not_pointed_at() -> None:
    """A compression pointer has 14 bits, so names written past octet 16383
    of a long TCP reply cannot be pointed at: they are written again, and
    the reply is byte for byte what dnspython renders (dnslib has no such
    limit and would write pointers to the wrong place)."""
    owner = "_sip._tcp.big.tm.example."
    targets = [f"endpoint-with-a-long-name-{i:03}.big.tm.example." for i in range(300)]
    srvs = tuple(Record(owner, RType.SRV, 60, Srv(1, 10, 5060, t)) for t in targets)
    glue = tuple(
        record
        for i, target in enumerate(targets)
        for record in (
            Record(target, RType.A, 60, ip_address(f"127.1.{i // 256}.{i % 256}")),
            Record(target, RType.AAAA, 60, ip_address(f"2001:db8::{i + 1:x}")),
        )
    )
    asked = dns.message.make_query(owner, "SRV")
    asked.id = 77
    query = parse_query(asked.to_wire())
    wire = codec.encode(query, Answer(Rcode.NOERROR, srvs, (), glue), None)
    unglued = codec.encode(query, Answer(Rcode.NOERROR, srvs), None)
    assert len(unglued) > codec.MAX_POINTER  # the glue starts past the reach

    expected = dns.message.Message(id=77)
    expected.flags = dns.flags.QR | dns.flags.AA | dns.flags.RD
    expected.question.append(
        dns.rrset.RRset(dns.name.from_text(owner), dns.rdataclass.IN, dns.rdatatype.SRV)
    )
    answer = dns.rrset.RRset(
        dns.name.from_text(owner), dns.rdataclass.IN, dns.rdatatype.SRV
    )
    for target in targets:
        answer.add(dns.rdata.from_text("IN", "SRV", f"1 10 5060 {target}"), 60)
    expected.answer.append(answer)
    for record in glue:
        expected.additional.append(
            dns.rrset.from_text(
                record.name, 60, "IN", record.rtype.name, str(record.rdata)
            )
        )
    assert wire == expected.to_wire(want_shuffle=False)
    names = {rrset.name.to_text() for rrset in dns.message.from_wire(wire).additional}
    assert names == set(targets)


def test_a_mailbox_without_its_final_dot_is_the_absolute_name() -> None:
    """Names are read as absolute with or without the final dot, escaped
    or not: the escaped mailbox `dns\\.admin` encodes the same either way."""
    with_dot, without = (
        replace(
            SOA_RECORD,
            rdata=Soa("ns1.tm.example.", rname, 7, 3600, 600, 604800, 60),
        )
        for rname in ("dns\\.admin.tm.example.", "dns\\.admin.tm.example")
    )
    query = make_query()
    wire = codec.encode(query, Answer(Rcode.NXDOMAIN, authority=(without,)), None)
    assert wire == codec.encode(
        query, Answer(Rcode.NXDOMAIN, authority=(with_dot,)), None
    )
    rname = dns.message.from_wire(wire).authority[0][0].rname
    assert [label.lower() for label in rname.labels] == [
        b"dns.admin",
        b"tm",
        b"example",
        b"",
    ]


def test_kept_record_bytes_follow_the_record_not_its_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The bytes after an owner name are kept per record object: records of
    one name with other TTLs or data each encode as their own, in turn and
    after the kept bytes are forgotten (a bound of two here)."""
    monkeypatch.setattr(codec, "MAX_TAILS", 2)
    query = make_query("_sip._udp.App.tm.example.", RType.SRV)
    owner = "_sip._udp.app.tm.example."
    records = [
        Record(NAME, RType.A, 60, ip_address("127.0.0.1")),
        Record(NAME, RType.A, 5, ip_address("127.0.0.1")),
        Record(NAME, RType.A, 60, ip_address("127.0.0.2")),
        Record(NAME, RType.AAAA, 60, ip_address("::1")),
        Record(owner, RType.SRV, 60, Srv(10, 50, 5060, "e1.app.tm.example.")),
        Record(owner, RType.SRV, 60, Srv(10, 50, 5061, "e1.app.tm.example.")),
    ]
    for _ in range(3):
        for record in records:
            answer = Answer(Rcode.NOERROR, (record,))
            wanted = dnslib_reply(query, answer, ((record,), (), ()))
            assert codec.encode(query, answer, None) == wanted
