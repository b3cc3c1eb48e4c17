"""Negative replies on the fast path: NXDOMAIN for a name a zone does not
have, REFUSED for a name in no zone.

Such a reply depends on the zone, not on the name, so a random-name flood (the
commonest attack on authoritative servers) must cost no more than a cached
answer and must not fill the per-name cache. One reply per (zone, EDNS kind)
is encoded per snapshot from the full path's own answer, asked about the zone
apex, and fitted to each question: the question's octets are copied in, and
every compression pointer after the question moves by the difference in
length, since each points into the zone's name (which ends every question in
the zone) or past it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.dns import codec
from app.dns.replies import Key, stored_query
from app.dns.wire import HEADER_LEN
from app.domain.answer import Answer
from app.domain.query import Rcode
from app.domain.records import negative_soa
from app.domain.snapshot import Snapshot

QUESTION_TAIL = 4  # QTYPE and QCLASS after the name
# Names the text form carries unescaped; anything else (a "." inside a label,
# a byte outside these) is left to the full path, which decides it.
_PLAIN_NAME = re.compile(r"[a-z0-9_.-]+")


@dataclass(frozen=True, slots=True)
class _Template:
    """An encoded reply to the zone apex, cut after its question."""

    header: bytes
    question_length: int  # of the apex name on the wire
    tail: bytes  # authority and additional sections
    pointers: tuple[int, ...]  # offsets in `tail` of compression pointers

    def fit(self, wire: bytes, end: int) -> bytes:
        """This reply for the question of `wire`, which ends at `end`."""
        delta = end - QUESTION_TAIL - HEADER_LEN - self.question_length
        tail = bytearray(self.tail)
        for at in self.pointers:
            target = ((tail[at] & 0x3F) << 8 | tail[at + 1]) + delta
            tail[at : at + 2] = (0xC000 | target).to_bytes(2, "big")
        return self.header + wire[HEADER_LEN:end] + bytes(tail)


class Negatives:
    """The negative replies of one snapshot, encoded on first use."""

    def __init__(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot
        self._templates: dict[tuple[str | None, int], _Template] = {}

    def reply(self, wire: bytes, key: Key, end: int) -> bytes | None:
        """The reply for a name that does not exist, or None: the name exists
        (its answers are cached per name), or it needs the full path."""
        if key[1] in codec.ZONE_TRANSFERS:
            return None
        name = _text(key[0])
        snapshot = self._snapshot
        if name is None or name in snapshot.nodes:
            return None
        if name in snapshot.empty_non_terminals:
            return None  # NODATA, cached per name like other answers
        zone = snapshot.zone_of(name)
        apex = None if zone is None else zone.name
        template = self._templates.get((apex, key[2]))
        if template is None:
            template = self._templates[(apex, key[2])] = self._encode(apex, key[2])
        return template.fit(wire, end)

    def _encode(self, apex: str | None, kind: int) -> _Template:
        """The full path's reply to the apex (or, for no zone, the root)."""
        name = apex or "."
        labels = tuple(x.encode() for x in name[:-1].split(".")) if apex else ()
        query = stored_query(name, labels, 1, kind)
        if apex is None:
            result = Answer(Rcode.REFUSED, authoritative=False)
        else:
            soa = negative_soa(self._snapshot.soas[apex])
            result = Answer(Rcode.NXDOMAIN, authority=(soa,))
        wire = codec.encode(query, result, None)
        question_length = sum(len(label) + 1 for label in labels) + 1
        cut = HEADER_LEN + question_length + QUESTION_TAIL
        tail = wire[cut:]
        return _Template(wire[:HEADER_LEN], question_length, tail, _pointers(tail))


def _text(name: bytes) -> str | None:
    """The absolute text form of a lowercase wire name, or None when a label
    would need escaping (a "." inside it, a byte outside the plain set)."""
    try:
        text = name.decode("ascii")
    except UnicodeDecodeError:
        return None
    labels = []
    at = 0
    while length := name[at]:
        label = text[at + 1 : at + 1 + length]
        if "." in label:
            return None
        labels.append(label)
        at += length + 1
    if not labels:
        return "."
    joined = ".".join(labels) + "."
    return joined if _PLAIN_NAME.fullmatch(joined) else None


def _pointers(tail: bytes) -> tuple[int, ...]:
    """Where the compression pointers are in the records of `tail`."""
    found: list[int] = []
    at = 0
    while at < len(tail):
        at = _skip_name(tail, at, found)
        rtype = int.from_bytes(tail[at : at + 2], "big")
        rdlength = int.from_bytes(tail[at + 8 : at + 10], "big")
        at += 10
        if rtype == 6:  # SOA: MNAME and RNAME, then five numbers
            name_at = _skip_name(tail, at, found)
            _skip_name(tail, name_at, found)
        at += rdlength
    return tuple(found)


def _skip_name(wire: bytes, at: int, pointers: list[int]) -> int:
    """The offset after the name at `at`, noting a pointer that ends it."""
    while True:
        length = wire[at]
        if length == 0:
            return at + 1
        if length & 0xC0 == 0xC0:
            pointers.append(at)
            return at + 2
        at += length + 1
