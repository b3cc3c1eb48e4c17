"""DNS replies on the wire. No routing decisions here.

Queries are decoded by app.dns.wire (strict, by hand); replies are built here,
by hand as well: every reply the full path gives, and every reply the fast
path stores, goes through `encode`, and a general codec's object model cost
about 90 µs a reply, more than the whole decision. The records are few (A,
AAAA, CNAME, NS, SOA, SRV, HINFO and our OPT), so the encoder is small; the
tests check its bytes against dnslib's for every kind.
"""

from __future__ import annotations

from functools import lru_cache
from struct import Struct

from app.dns.wire import HEADER_LEN, TYPE_OPT, Query
from app.domain.answer import Answer
from app.domain.model import StaticData
from app.domain.query import Rcode, RType
from app.domain.records import Hinfo, Naptr, Record, Soa, Srv

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

QR, AA, TC, RD, CD = 0x8000, 0x0400, 0x0200, 0x0100, 0x0010
MAX_POINTER = 0x3FFF  # a compression pointer has 14 bits of offset

_HEADER = Struct("!HHHHHH")
_RR_HEAD = Struct("!HHIH")  # type, class, TTL, RDLENGTH
_SRV_HEAD = Struct("!HHH")
_SOA_TIMES = Struct("!IIIII")
_NAPTR_HEAD = Struct("!HH")
_QUESTION_TAIL = Struct("!BHH")  # the root label ending QNAME, QTYPE, QCLASS
_LENGTH = [bytes((n,)) for n in range(256)]  # a label's length octet

Labels = tuple[bytes, ...]


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
    flags = QR | (opcode & 0xF) << 11 | (rcode & 0xF)
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
    aa = answer.authoritative
    opt = _opt(query, answer.rcode, answer.scope, extra)
    sections = (answer.answer, answer.authority, answer.additional)
    wire = _message(query, answer.rcode, aa, sections, opt)
    if limit is None or len(wire) <= limit:
        return wire
    unglued = (answer.answer, answer.authority, ())
    wire = _message(query, answer.rcode, aa, unglued, opt)
    if len(wire) <= limit:
        return wire
    return _message(query, answer.rcode, aa, ((), (), ()), opt, TC)


def rcode_only(query: Query, rcode: int, extra: Options = ()) -> bytes:
    """An empty reply carrying the question: REFUSED, SERVFAIL, BADVERS."""
    opt = _opt(query, rcode, 0, extra)
    return _message(query, rcode, False, ((), (), ()), opt)


def _message(
    query: Query,
    rcode: int,
    aa: bool,
    sections: tuple[tuple[Record, ...], tuple[Record, ...], tuple[Record, ...]],
    opt: bytes | None,
    tc: int = 0,
) -> bytes:
    """Header, the question as the asker wrote it, the three sections, our OPT.

    Names compress against the question in lowercase (every name we hold is
    lowercase), so an answer's owner points at the question and echoes the
    asker's letter case, as the question does."""
    flags = query.flags
    # RA, AD and Z stay clear: we never recurse and do not validate. RD and CD
    # are copied (RFC 6840 §5.9 for CD).
    flags = QR | (query.opcode & 0xF) << 11 | (flags & (RD | CD)) | tc | (rcode & 0xF)
    if aa:
        flags |= AA
    answers, authority, additional = sections
    out = bytearray(
        _HEADER.pack(
            query.id,
            flags,
            1,
            len(answers),
            len(authority),
            len(additional) + (opt is not None),
        )
    )
    names: dict[Labels, int] = {}
    asked = query.labels
    lowered = tuple([label.lower() for label in asked])
    offset = HEADER_LEN
    for i, label in enumerate(asked):
        names[lowered[i:]] = offset
        out += _LENGTH[len(label)] + label
        offset += 1 + len(label)
    out += _QUESTION_TAIL.pack(0, query.qtype, query.qclass)
    for section in sections:
        for record in section:
            _record(out, names, record)
    if opt is not None:
        out += opt
    return bytes(out)


# What follows the owner name of an A, AAAA or SRV record (type, class, TTL,
# RDLENGTH, RDATA): it never holds a compressed name, so it is the same bytes
# in every reply. Profiles keep their records for a snapshot's life, so the
# bytes are kept by the record's identity, with the record held so that its
# id is not reused while kept (a frozen dataclass hashes its address as text:
# too slow for a key). Bounded: past MAX_TAILS, forgotten at once.
_TAILS: dict[int, tuple[Record, bytes]] = {}
MAX_TAILS = 8192


def _record(out: bytearray, names: dict[Labels, int], record: Record) -> None:
    _name(out, names, record.name)
    kept = _TAILS.get(id(record))
    if kept is not None and kept[0] is record:
        out += kept[1]
        return
    rtype = record.rtype
    if rtype is RType.A or rtype is RType.AAAA or rtype is RType.SRV:
        start = len(out)
        _record_data(out, names, record)
        if len(_TAILS) >= MAX_TAILS:
            _TAILS.clear()
        _TAILS[id(record)] = (record, bytes(out[start:]))
        return
    _record_data(out, names, record)


def _record_data(out: bytearray, names: dict[Labels, int], record: Record) -> None:
    """Type, class, TTL, RDLENGTH and RDATA, names in RDATA compressed where
    their RFC allows."""
    rdata = record.rdata
    rtype = record.rtype
    if isinstance(rdata, StaticData):  # made once, names uncompressed
        out += _RR_HEAD.pack(rtype, CLASS_IN, record.ttl, len(rdata.wire))
        out += rdata.wire
        return
    if rtype is RType.A or rtype is RType.AAAA:
        packed: bytes = rdata.packed  # type: ignore[union-attr]
        out += _RR_HEAD.pack(rtype, CLASS_IN, record.ttl, len(packed))
        out += packed
        return
    if isinstance(rdata, Srv):
        target = _uncompressed(rdata.target)  # RFC 2782: never compressed
        out += _RR_HEAD.pack(rtype, CLASS_IN, record.ttl, 6 + len(target))
        out += _SRV_HEAD.pack(rdata.priority, rdata.weight, rdata.port) + target
        return
    head = len(out)
    out += bytes(10)  # type, class, TTL, RDLENGTH: packed once RDATA is in
    if isinstance(rdata, Soa):
        _name(out, names, rdata.mname)
        _name(out, names, rdata.rname)
        out += _SOA_TIMES.pack(
            rdata.serial, rdata.refresh, rdata.retry, rdata.expire, rdata.minimum
        )
    elif isinstance(rdata, Hinfo):
        out += _character_string(rdata.cpu) + _character_string(rdata.os)
    elif isinstance(rdata, Naptr):
        out += _NAPTR_HEAD.pack(rdata.order, rdata.preference)
        out += _character_string(rdata.flags) + _character_string(rdata.service)
        out += _character_string(rdata.regexp)
        out += _uncompressed(rdata.replacement)  # RFC 3403 §4.1: never compressed
    else:  # NS, CNAME: a name
        _name(out, names, str(rdata))
    length = len(out) - head - 10
    out[head : head + 10] = _RR_HEAD.pack(rtype, CLASS_IN, record.ttl, length)


def _name(out: bytearray, names: dict[Labels, int], name: str) -> None:
    """A name, ending in a pointer to the longest suffix already written
    (RFC 1035 §4.1.4); its own suffixes are remembered for the names after."""
    for suffix, label in _suffixes(name):
        pointer = names.get(suffix)
        if pointer is not None:
            out += (0xC000 | pointer).to_bytes(2, "big")
            return
        if len(out) <= MAX_POINTER:
            names[suffix] = len(out)
        out += label
    out += b"\x00"


@lru_cache(maxsize=65_536)
def _suffixes(name: str) -> tuple[tuple[Labels, bytes], ...]:
    """Each suffix of the name with its first label on the wire (length
    octet and octets): what compression walks, worked out once per name."""
    labels = labels_of(name)
    return tuple(
        (labels[i:], _LENGTH[len(labels[i])] + labels[i]) for i in range(len(labels))
    )


@lru_cache(maxsize=65_536)
def _uncompressed(name: str) -> bytes:
    return b"".join(label for _, label in _suffixes(name)) + b"\x00"


@lru_cache(maxsize=65_536)
def labels_of(name: str) -> Labels:
    """The labels of a name in presentation form, `\\.` and `\\DDD` unescaped
    (a mailbox's local part may hold a dot, RFC 1035 §8). The names come from
    the snapshot, so the cache is bounded by the configuration, not by queries."""
    if name in (".", ""):
        return ()
    if "\\" not in name:
        return tuple(part.encode("ascii") for part in name.rstrip(".").split("."))
    labels: list[bytes] = []
    label = bytearray()
    i = 0
    while i < len(name):
        char = name[i]
        if char == "\\" and name[i + 1 : i + 4].isdigit():
            label.append(int(name[i + 1 : i + 4]))
            i += 4
            continue
        if char == "\\":
            label += name[i + 1].encode("ascii")
            i += 2
            continue
        if char == ".":
            labels.append(bytes(label))
            label = bytearray()
        else:
            label += char.encode("ascii")
        i += 1
    if label:
        labels.append(bytes(label))
    return tuple(labels)


def _opt(query: Query, rcode: int, scope: int, extra: Options) -> bytes | None:
    """Our OPT, last in the message: version 0, our payload size, the upper
    rcode bits, ECS echoed with the scope that decided (RFC 7871 §7.2), then
    `extra`. Other options the client sent are not echoed (RFC 6891 §6.1.2)."""
    edns = query.edns
    if edns is None:
        return None
    options = b""
    ecs = edns.ecs
    if ecs is not None:
        scope = 0 if ecs.source_prefix == 0 else min(scope, ecs.source_prefix)
        # The client's option data with our scope: family and source as sent.
        options += _option(OPTION_ECS, ecs.data[:3] + bytes((scope,)) + ecs.data[4:])
    for code, data in extra:
        options += _option(code, data)
    do_bit = 0x8000 if edns.do else 0  # RFC 3225 §3: DO is copied
    ttl = (rcode >> 4) << 24 | EDNS_VERSION << 16 | do_bit
    return (
        b"\x00" + _RR_HEAD.pack(TYPE_OPT, OUR_UDP_PAYLOAD, ttl, len(options)) + options
    )


def _option(code: int, data: bytes) -> bytes:
    return code.to_bytes(2, "big") + len(data).to_bytes(2, "big") + data


def _character_string(text: str) -> bytes:
    raw = text.encode()
    return bytes([len(raw)]) + raw
