"""DNS wire format in and out, with dnslib. No routing decisions here.

The only module that imports dnslib, so the codec can be replaced on the hot
path later without touching routing.
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Address

from dnslib import (
    AAAA,
    CNAME,
    EDNS0,
    NS,
    RR,
    SOA,
    SRV,
    A,
    DNSError,
    DNSHeader,
    DNSQuestion,
    DNSRecord,
)

from app.domain.answer import Answer
from app.domain.query import Rcode, RType
from app.domain.records import Record, Soa, Srv

HEADER_LEN = 12
MAX_LABEL, MAX_NAME = 63, 255
OPCODE_QUERY = 0
OPT = 41
CLASS_IN = 1
PLAIN_UDP_LIMIT = 512  # RFC 1035 §4.2.1, without EDNS
OUR_UDP_PAYLOAD = 1232  # the DNS Flag Day 2020 size: no IP fragmentation


class Malformed(ValueError):
    """The packet cannot be parsed as a DNS message."""


@dataclass(frozen=True, slots=True)
class Request:
    """A parsed query: what the handler needs, plus the parsed message for replies."""

    message: DNSRecord
    qname: str  # lowercase, absolute; matching ignores case
    qtype: int
    qclass: int
    is_response: bool
    opcode: int
    question_count: int
    edns_payload: int | None  # the client's UDP size, None without OPT


def decode(wire: bytes) -> Request:
    try:
        message = DNSRecord.parse(wire)
    except (DNSError, ValueError, IndexError, UnicodeDecodeError) as exc:
        raise Malformed(str(exc)) from exc
    question = message.q if message.questions else DNSQuestion(".")
    _check_name(question.qname.label)
    opt = next((rr for rr in message.ar if rr.rtype == OPT), None)
    return Request(
        message=message,
        qname=str(question.qname).lower() if message.questions else ".",
        qtype=question.qtype,
        qclass=question.qclass,
        is_response=bool(message.header.qr),
        opcode=message.header.opcode,
        question_count=len(message.questions),
        edns_payload=max(PLAIN_UDP_LIMIT, opt.rclass) if opt is not None else None,
    )


def _check_name(labels: tuple[bytes, ...]) -> None:
    """RFC 1035 §2.3.4: labels of at most 63 octets, names of at most 255."""
    if any(len(label) > MAX_LABEL for label in labels):
        raise Malformed("label longer than 63 octets")
    if sum(len(label) + 1 for label in labels) + 1 > MAX_NAME:
        raise Malformed("name longer than 255 octets")


def formerr_for(wire: bytes) -> bytes | None:
    """FORMERR when at least the 12-byte header survived, else silence; never raises."""
    if len(wire) < HEADER_LEN:
        return None
    qid = int.from_bytes(wire[:2], "big")
    flags = int.from_bytes(wire[2:4], "big")
    if flags & 0x8000:  # a response: answering it could start a loop
        return None
    header = DNSHeader(id=qid, qr=1, opcode=(flags >> 11) & 0xF, rcode=Rcode.FORMERR)
    return bytes(DNSRecord(header).pack())


def encode(request: Request, answer: Answer, udp: bool) -> bytes:
    """The reply; over UDP, cut to the client's size with TC set (RFC 1035 §4.2.1)."""
    reply = _skeleton(request, answer.rcode, aa=answer.authoritative)
    for section, records in (
        (reply.add_answer, answer.answer),
        (reply.add_auth, answer.authority),
        (reply.add_ar, answer.additional),
    ):
        for record in records:
            section(_rr(record))
    wire = bytes(reply.pack())
    limit = request.edns_payload or PLAIN_UDP_LIMIT
    if udp and len(wire) > limit:
        truncated = _skeleton(request, answer.rcode, aa=answer.authoritative)
        truncated.header.tc = 1
        wire = bytes(truncated.pack())
    return wire


def rcode_only(request: Request, rcode: Rcode) -> bytes:
    """An empty reply with just an rcode (NOTIMP, SERVFAIL, FORMERR)."""
    return bytes(_skeleton(request, rcode, aa=False).pack())


def _skeleton(request: Request, rcode: Rcode, aa: bool) -> DNSRecord:
    header = DNSHeader(
        id=request.message.header.id,
        qr=1,
        aa=int(aa),
        ra=0,  # authoritative only: we never recurse
        rd=request.message.header.rd,
        opcode=request.opcode,
        rcode=rcode,
    )
    reply = DNSRecord(header, questions=list(request.message.questions))
    if request.edns_payload is not None:
        reply.add_ar(EDNS0(udp_len=OUR_UDP_PAYLOAD))
    return reply


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
    elif record.rtype is RType.A or record.rtype is RType.AAAA:
        data = (A if isinstance(rdata, IPv4Address) else AAAA)(str(rdata))
    else:
        data = (NS if record.rtype is RType.NS else CNAME)(str(rdata))
    return RR(record.name, int(record.rtype), CLASS_IN, record.ttl, data)
