"""A strict decoder for incoming queries: header, one question, and the OPT record.

Written by hand rather than with the general codec because a query needs only
these parts, and because strictness matters here: every malformation of RFC
1035 §4.1 (counts past the end, compression loops and forward pointers, long
labels and names) and of RFC 6891 / RFC 7871 (duplicate or misplaced OPT, bad
ECS) must become FORMERR instead of an exception or a lenient guess.
"""

from __future__ import annotations

from ipaddress import IPv4Address, IPv6Address
from struct import Struct
from typing import NamedTuple

HEADER_LEN = 12
RD_BIT, CD_BIT = 0x01, 0x10  # in the third and fourth header octets
MAX_LABEL = 63
MAX_NAME = 255
TYPE_OPT = 41
OPTION_ECS = 8
OPTION_NSID = 3
OPTION_COOKIE = 10
OPTION_KEEPALIVE = 11
ECS_FAMILIES = {1: 32, 2: 128}  # IANA address family → address bits
_HEADER = Struct("!HHHHHH")  # ID, flags, QDCOUNT, ANCOUNT, NSCOUNT, ARCOUNT
_OPTION_HEAD = Struct("!HH")  # OPTION-CODE, OPTION-LENGTH
_NO_OPTIONS = (None, False, None, None)  # what _options reads from no options
_QUESTION_TAIL = Struct("!HH")  # QTYPE, QCLASS
_RR_HEAD = Struct("!HHIH")  # TYPE, CLASS, TTL, RDLENGTH


class Malformed(ValueError):
    """Not a well-formed DNS query; the reply is FORMERR (or silence)."""


class ClientSubnet(NamedTuple):
    """An EDNS Client Subnet option as received (RFC 7871 §6)."""

    family: int
    source_prefix: int
    scope_prefix: int
    raw_address: bytes  # as sent: echoed back byte for byte
    data: bytes  # the whole option data, family onwards (app.dns.client reads it)

    @property
    def address(self) -> IPv4Address | IPv6Address:
        """The address, padded with zero bits (routing reads `data` instead,
        through app.dns.client: most queries never need this object)."""
        bits = ECS_FAMILIES[self.family]
        value = int.from_bytes(self.raw_address, "big") << (
            bits - 8 * len(self.raw_address)
        )
        return IPv4Address(value) if bits == 32 else IPv6Address(value)


class Edns(NamedTuple):
    payload: int
    version: int
    do: bool
    ecs: ClientSubnet | None
    nsid: bool = False  # the client asked who answers (RFC 5001)
    cookie: tuple[bytes, bytes] | None = None  # (client, server) cookie, RFC 7873
    keepalive: bytes | None = None  # edns-tcp-keepalive data when sent (RFC 7828)


class Query(NamedTuple):
    """A decoded query. The wire values are named tuples, not dataclasses:
    one is built for every query the full path answers, and a tuple is built
    several times faster."""

    id: int
    flags: int
    opcode: int
    qname: str  # lowercase and absolute, for matching
    labels: tuple[bytes, ...]  # as sent: the reply echoes the case exactly
    qtype: int
    qclass: int
    edns: Edns | None


def header_flags(wire: bytes) -> tuple[int, int]:
    """(id, flags) of a message whose 12-byte header is present."""
    return int.from_bytes(wire[0:2], "big"), int.from_bytes(wire[2:4], "big")


def read_name(wire: bytes, offset: int) -> tuple[list[bytes], int]:
    """The labels at `offset` and the offset just past the name in place.

    Compression pointers must point strictly backwards, to a place before the
    name that uses them: this rules out loops and forward references.
    """
    labels: list[bytes] = []
    total = 1
    end = -1
    limit = offset  # a pointer must land before the start of the current name part
    size = len(wire)
    while True:
        if offset >= size:
            raise Malformed("name runs past the end of the message")
        length = wire[offset]
        if length == 0:
            return labels, (offset + 1 if end < 0 else end)
        kind = length & 0xC0
        if kind == 0xC0:
            if offset + 1 >= size:
                raise Malformed("truncated compression pointer")
            target = ((length & 0x3F) << 8) | wire[offset + 1]
            if target < HEADER_LEN or target >= limit:
                raise Malformed("compression pointer is not backwards")
            if end < 0:
                end = offset + 2
            offset = limit = target
            continue
        if kind:
            raise Malformed("unknown label type")
        label = wire[offset + 1 : offset + 1 + length]
        if len(label) != length:
            raise Malformed("label runs past the end of the message")
        total += length + 1
        if total > MAX_NAME:
            raise Malformed("name longer than 255 octets")
        labels.append(label)
        offset += length + 1


def text_of(labels: list[bytes]) -> str:
    """The lowercase text form used for matching.

    Case folding is ASCII-only (RFC 4343); a dot inside a label is escaped, so
    the label `a.b` can never match the two labels `a` and `b`.
    """
    if not labels:
        return "."
    joined = b".".join(labels)
    if joined.count(b".") == len(labels) - 1:  # no label holds a dot
        return joined.lower().decode("latin-1") + "."
    return ".".join(_text_label(label) for label in labels) + "."


def _text_label(label: bytes) -> str:
    return label.lower().decode("latin-1").replace(".", "\\.")


def parse_query(wire: bytes) -> Query:
    """Decode a query. Raises Malformed for anything RFC 1035 / 6891 / 7871 forbid."""
    if len(wire) < HEADER_LEN:
        raise Malformed("shorter than a DNS header")
    qid, flags, qdcount, ancount, nscount, arcount = _HEADER.unpack_from(wire)
    if qdcount != 1:
        raise Malformed(f"{qdcount} questions; a query has exactly one")
    labels, offset = read_name(wire, HEADER_LEN)
    if offset + 4 > len(wire):
        raise Malformed("question runs past the end of the message")
    qtype, qclass = _QUESTION_TAIL.unpack_from(wire, offset)
    question_end = offset + 4
    edns, _ = _walk_records(wire, question_end, ancount, nscount, arcount)
    # Positional: a named tuple built by keyword costs twice as much.
    opcode = (flags >> 11) & 0xF
    qname = text_of(labels)
    return Query(qid, flags, opcode, qname, tuple(labels), qtype, qclass, edns)


def _walk_records(
    wire: bytes, offset: int, ancount: int, nscount: int, arcount: int
) -> tuple[Edns | None, int]:
    """Step over every record; find the OPT, which may only be one, in the
    additional section, owned by the root (RFC 6891 §6.1.1)."""
    edns = None
    size = len(wire)
    owner: list[bytes]
    for index in range(ancount + nscount + arcount):
        if offset < size and wire[offset] == 0:  # the root, as an OPT is owned
            owner = []
            offset += 1
        else:
            owner, offset = read_name(wire, offset)
        if offset + 10 > size:
            raise Malformed("record header runs past the end of the message")
        rtype, rclass, ttl, rdlength = _RR_HEAD.unpack_from(wire, offset)
        rdata = wire[offset + 10 : offset + 10 + rdlength]
        if len(rdata) != rdlength:
            raise Malformed("record data runs past the end of the message")
        offset += 10 + rdlength
        if rtype != TYPE_OPT:
            continue
        if index < ancount + nscount:
            raise Malformed("OPT outside the additional section")
        if edns is not None:
            raise Malformed("more than one OPT record")
        if owner:
            raise Malformed("OPT owner is not the root")
        ecs, nsid, cookie, keepalive = _options(rdata) if rdata else _NO_OPTIONS
        version, do = (ttl >> 16) & 0xFF, bool(ttl & 0x8000)
        edns = Edns(rclass, version, do, ecs, nsid, cookie, keepalive)
    return edns, offset


def _options(
    options: bytes,
) -> tuple[ClientSubnet | None, bool, tuple[bytes, bytes] | None, bytes | None]:
    """The ECS option among the OPT's options, whether NSID was asked for, the
    COOKIE, and the TCP keepalive option's data; other options are ignored."""
    found = None
    nsid = False
    cookie = None
    keepalive = None
    offset = 0
    size = len(options)
    while offset < size:
        if offset + 4 > size:
            raise Malformed("truncated EDNS option")
        code, length = _OPTION_HEAD.unpack_from(options, offset)
        data = options[offset + 4 : offset + 4 + length]
        if len(data) != length:
            raise Malformed("EDNS option runs past the end of the OPT record")
        offset += 4 + length
        if code == OPTION_ECS:
            if found is not None:
                raise Malformed("more than one ECS option")
            found = _parse_ecs(data)
        elif code == OPTION_NSID:
            nsid = True  # RFC 5001 §2.3: the request's payload is empty, ignored
        elif code == OPTION_COOKIE:
            if cookie is not None:
                raise Malformed("more than one COOKIE option")
            # RFC 7873 §5.2.2: a client cookie of 8 octets, then none or a
            # server cookie of 8 to 32; anything else is FORMERR.
            if length != 8 and not 16 <= length <= 40:
                raise Malformed(f"COOKIE option of {length} octets")
            cookie = (bytes(data[:8]), bytes(data[8:]))
        elif code == OPTION_KEEPALIVE:
            keepalive = bytes(data)
    return found, nsid, cookie, keepalive


def _parse_ecs(data: bytes) -> ClientSubnet:
    """RFC 7871 §6: family, source and scope prefix, then just enough address octets."""
    if len(data) < 4:
        raise Malformed("ECS option shorter than 4 octets")
    family = int.from_bytes(data[0:2], "big")
    source, scope = data[2], data[3]
    raw = data[4:]
    bits = ECS_FAMILIES.get(family)
    if bits is None:
        raise Malformed(f"ECS family {family} is unknown")
    if source > bits or scope > bits:
        raise Malformed("ECS prefix longer than the address")
    if len(raw) != (source + 7) // 8:
        raise Malformed("ECS address length does not match its source prefix")
    if source % 8 and raw[-1] & (0xFF >> (source % 8)):
        raise Malformed("ECS address has bits set past its source prefix")
    return ClientSubnet(family, source, scope, raw, bytes(data))
