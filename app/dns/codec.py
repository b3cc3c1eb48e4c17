"""DNS replies on the wire, with dnslib. No routing decisions here.

Queries are decoded by app.dns.wire (strict, by hand); replies are built here.
The only module that imports dnslib.
"""

from __future__ import annotations

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

from app.dns.wire import HEADER_LEN, TYPE_OPT, Query
from app.domain.answer import Answer
from app.domain.query import Rcode, RType
from app.domain.records import Hinfo, Record, Soa, Srv

OPCODE_QUERY = 0
CLASS_IN = 1
ZONE_TRANSFERS = frozenset({251, 252})  # IXFR, AXFR: not offered, REFUSED
PLAIN_UDP_LIMIT = 512  # RFC 1035 §4.2.1, without EDNS
OUR_UDP_PAYLOAD = 1232  # DNS Flag Day 2020: no IP fragmentation
EDNS_VERSION = 0
BADVERS = 16  # extended rcode: the upper 8 bits go in the OPT record
OPTION_ECS = 8
OPTION_NSID = 3
OPTION_COOKIE = 10
OPTION_KEEPALIVE = 11


def udp_limit(query: Query) -> int:
    return udp_limit_of(query.edns.payload if query.edns is not None else None)


def udp_limit_of(payload: int | None) -> int:
    """The largest UDP reply: the client's EDNS size (None: no EDNS), within
    [512, 1232]."""
    if payload is None:
        return PLAIN_UDP_LIMIT
    return max(PLAIN_UDP_LIMIT, min(payload, OUR_UDP_PAYLOAD))


def header_only(qid: int, opcode: int, rcode: Rcode) -> bytes:
    """A reply with no question: for packets whose question cannot be trusted.

    Only QR and the opcode are set; nothing else is copied from the request.
    """
    flags = 0x8000 | (opcode & 0xF) << 11 | (rcode & 0xF)
    return qid.to_bytes(2, "big") + flags.to_bytes(2, "big") + bytes(8)


Options = tuple[tuple[int, bytes], ...]  # (code, data) added to our OPT


def encode(
    query: Query, answer: Answer, limit: int | None, extra: Options = ()
) -> bytes:
    """The reply; `limit` is the UDP size (None over TCP); `extra` options go
    in our OPT (NSID, COOKIE: the handler decides which).

    Past the limit, the additional section goes first (RFC 2181 §9: no TC for
    that); if the answer still does not fit, the reply is empty with TC set, so
    no partial RRset is ever sent.
    """
    full = _message(query, answer, answer.additional, extra)
    wire = _pack(full, query)
    if limit is None or len(wire) <= limit:
        return wire
    wire = _pack(_message(query, answer, (), extra), query)
    if len(wire) <= limit:
        return wire
    truncated = _message(
        query, Answer(answer.rcode, authoritative=answer.authoritative), (), extra
    )
    truncated.header.tc = 1
    return _pack(truncated, query)


def rcode_only(query: Query, rcode: int, extra: Options = ()) -> bytes:
    """An empty reply carrying the question: REFUSED, SERVFAIL, BADVERS."""
    message = _skeleton(query, rcode, aa=False)
    _add_opt(message, query, rcode, 0, extra)
    return _pack(message, query)


def _pack(message: DNSRecord, query: Query) -> bytes:
    """Encode with the question in lowercase, so answer names compress against
    it, then put the asker's letter case back: the question is the first name
    in the message, never compressed, so its octets can be swapped in place."""
    wire = bytearray(message.pack())
    asked = b"".join(bytes([len(label)]) + label for label in query.labels) + b"\x00"
    wire[HEADER_LEN : HEADER_LEN + len(asked)] = asked
    return bytes(wire)


def _message(
    query: Query,
    answer: Answer,
    additional: tuple[Record, ...],
    extra: Options,
) -> DNSRecord:
    message = _skeleton(query, answer.rcode, aa=answer.authoritative)
    for record in answer.answer:
        message.add_answer(_rr(record))
    for record in answer.authority:
        message.add_auth(_rr(record))
    for record in additional:
        message.add_ar(_rr(record))
    _add_opt(message, query, answer.rcode, answer.scope, extra)
    return message


def _skeleton(query: Query, rcode: int, aa: bool) -> DNSRecord:
    header = DNSHeader(id=query.id, qr=1, opcode=query.opcode, rcode=rcode & 0xF)
    header.aa = int(aa)
    header.rd = (query.flags >> 8) & 1
    header.cd = (query.flags >> 4) & 1  # RFC 6840 §5.9: CD is copied
    # RA, AD and Z stay clear: we never recurse and do not validate.
    lowered = [label.lower() for label in query.labels]
    question = DNSQuestion(DNSLabel(lowered), query.qtype, query.qclass)
    return DNSRecord(header, questions=[question])


def _add_opt(
    message: DNSRecord, query: Query, rcode: int, scope: int, extra: Options
) -> None:
    """Our OPT, last in the message: version 0, our payload size, the upper
    rcode bits, ECS echoed with the scope that decided (RFC 7871 §7.2), then
    `extra`. Other options the client sent are not echoed (RFC 6891 §6.1.2)."""
    if query.edns is None:
        return
    options = []
    ecs = query.edns.ecs
    if ecs is not None:
        scope = 0 if ecs.source_prefix == 0 else min(scope, ecs.source_prefix)
        data = ecs.family.to_bytes(2, "big") + bytes([ecs.source_prefix, scope])
        options.append(EDNSOption(OPTION_ECS, data + ecs.raw_address))
    options += [EDNSOption(code, data) for code, data in extra]
    do_bit = 0x8000 if query.edns.do else 0  # RFC 3225 §3: DO is copied
    ttl = (rcode >> 4) << 24 | EDNS_VERSION << 16 | do_bit
    message.add_ar(RR(".", TYPE_OPT, OUR_UDP_PAYLOAD, ttl, options))


def _rr(record: Record) -> RR:
    rdata = record.rdata
    if isinstance(rdata, Soa):
        data = SOA(
            rdata.mname,
            rdata.rname,
            (rdata.serial, rdata.refresh, rdata.retry, rdata.expire, rdata.minimum),
        )
    elif isinstance(rdata, Srv):
        data = SRV(rdata.priority, rdata.weight, rdata.port, rdata.target)
    elif isinstance(rdata, Hinfo):
        data = RD(_character_string(rdata.cpu) + _character_string(rdata.os))
    elif record.rtype is RType.A:
        data = A(str(rdata))
    elif record.rtype is RType.AAAA:
        data = AAAA(str(rdata))
    else:
        data = (NS if record.rtype is RType.NS else CNAME)(str(rdata))
    return RR(record.name, int(record.rtype), CLASS_IN, record.ttl, data)


def _character_string(text: str) -> bytes:
    raw = text.encode()
    return bytes([len(raw)]) + raw
