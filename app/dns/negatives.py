"""Negative replies on the fast path: NXDOMAIN for a name a zone does not
have, REFUSED for a name in no zone. A name below a delegation is the
child zone's: it gets a referral from the full path (kept per name).

Such a reply depends on the zone, not on the name, so a random-name flood (the
commonest attack on authoritative servers) must cost no more than a cached
answer and must not fill the per-name cache. One reply per (zone, EDNS kind)
is encoded per snapshot from the full path's own answer, asked about the zone
apex, and fitted to each question: the question's octets are copied in, and
every compression pointer after the question moves by the difference in
length, since each points into the zone's name (which ends every question in
the zone) or past it. The zone of each parent name met is remembered, so a
flood below one parent reads only each query's first label.
"""

from __future__ import annotations

from app.dns import codec
from app.dns.querystats import NegativeTally
from app.dns.replies import EDNS_KINDS, Key, stored_query
from app.dns.wire import CD_BIT, HEADER_LEN, RD_BIT
from app.domain.answer import Answer
from app.domain.query import Rcode
from app.domain.records import negative_soa
from app.domain.snapshot import Snapshot

QUESTION_TAIL = 4  # QTYPE and QCLASS after the name
# The octets a label's text form carries unescaped; a name with any other
# octet in a label (a ".", a space, a zero) is left to the full path.
_PLAIN_OCTETS = b"abcdefghijklmnopqrstuvwxyz0123456789_-"


class _Template:
    """An encoded reply to the zone apex, cut after its question, and the
    parts a query's own are made of (see Negatives.reply)."""

    __slots__ = ("_pointers", "_question_length", "_tail", "heads", "tails")

    def __init__(self, header: bytes, question_length: int, tail: bytes) -> None:
        self._question_length = question_length  # of the apex name on the wire
        self._tail = tail  # authority and additional sections
        self._pointers = _pointers(tail)  # offsets in `tail` of compression pointers
        # The tail for a question that ends at an offset: at most 255 of them.
        self.tails: dict[int, bytes] = {}
        # Header octets 2-11 by the RD and CD bits of a query (wire[2] & RD_BIT
        # | wire[3] & CD_BIT), copied into the reply as the full path does.
        self.heads = [b""] * (RD_BIT + CD_BIT + 1)
        for rd in (0, RD_BIT):
            for cd in (0, CD_BIT):
                flags = bytes((header[2] | rd, header[3] | cd))
                self.heads[rd | cd] = flags + header[4:]

    def tail_for(self, end: int) -> bytes:
        """The tail for a question that ends at `end`, kept: every compression
        pointer moved by the difference in length from the apex's question."""
        delta = end - QUESTION_TAIL - HEADER_LEN - self._question_length
        tail = bytearray(self._tail)
        for at in self._pointers:
            target = ((tail[at] & 0x3F) << 8 | tail[at + 1]) + delta
            tail[at : at + 2] = (0xC000 | target).to_bytes(2, "big")
        self.tails[end] = bytes(tail)
        return self.tails[end]


class _ZoneReplies:
    """The negative replies of one zone (apex None: of no zone, REFUSED), by
    EDNS kind, encoded on first use."""

    __slots__ = ("apex", "by_kind", "sent")

    def __init__(self, apex: str | None) -> None:
        self.apex = apex
        self.by_kind: list[_Template | None] = [None] * (max(EDNS_KINDS) + 1)
        # Replies sent, by qtype, [over TCP, over UDP]: counted by the caller.
        self.sent: tuple[dict[int, int], dict[int, int]] = ({}, {})


# A parent whose children the full path must answer: at or below a
# delegation (a referral per name), or with a label octet outside the plain set.
_REFER = _ZoneReplies(None)
MAX_PARENTS = 10_000  # parents remembered; a full table starts again


class Negatives:
    """The negative replies of one snapshot."""

    def __init__(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot
        # Wire forms (lowercase) of the names that exist (zone apexes and
        # delegation points among them), of the apexes and of the delegation
        # points, so that a name is looked up without being decoded: built on
        # first use.
        self._existing: frozenset[bytes] | None = None
        self._apexes: dict[bytes, str] = {}
        self._cuts: frozenset[bytes] = frozenset()
        self._zones: dict[str | None, _ZoneReplies] = {}
        # The zone of the children of each parent met (or _REFER), so that a
        # flood of random names below one parent walks that parent once.
        self._parents: dict[bytes, _ZoneReplies] = {}

    @property
    def sent(self) -> NegativeTally:
        """The replies sent, each zone's `sent` by apex (for a fold)."""
        return {apex: zone.sent for apex, zone in self._zones.items()}

    def reply(
        self, wire: bytes, key: Key, end: int
    ) -> tuple[bytes, _ZoneReplies] | None:
        """The reply for a name that does not exist, with its ID, RD and CD
        bits and question copied from `wire`, and its zone (whose `sent` the
        caller counts it in); or None: the name exists (its answers are
        cached per name), or it needs the full path."""
        name = key[0]
        existing = self._existing
        if existing is None:
            existing = self._learn()
        if name in existing or key[1] in codec.ZONE_TRANSFERS:
            return None  # answers and NODATA are cached per name like the rest
        parent_at = name[0] + 1
        if parent_at == 1:
            return None  # the root
        label = name[1:parent_at]
        if not label.isalnum() and label.translate(None, _PLAIN_OCTETS):
            return None  # an octet the text form would escape (isalnum: ASCII)
        parent = name[parent_at:]
        zone = self._parents.get(parent)
        if zone is None:
            zone = self._judge(parent)
        if zone is _REFER:
            return None
        template = zone.by_kind[key[2]]
        if template is None:
            template = zone.by_kind[key[2]] = self._encode(zone.apex, key[2])
        tail = template.tails.get(end)
        if tail is None:  # a REFUSED without EDNS has an empty tail
            tail = template.tail_for(end)
        head = template.heads[wire[2] & RD_BIT | wire[3] & CD_BIT]
        return b"".join((wire[:2], head, wire[HEADER_LEN:end], tail)), zone

    def _judge(self, parent: bytes) -> _ZoneReplies:
        """The zone of the children of `parent` (or _REFER), remembered."""
        zone = self._zone_below(parent)
        if len(self._parents) >= MAX_PARENTS:
            self._parents.clear()
        self._parents[parent] = zone
        return zone

    def _zone_below(self, parent: bytes) -> _ZoneReplies:
        apex, at = None, 0
        while length := parent[at]:
            if parent[at + 1 : at + 1 + length].translate(None, _PLAIN_OCTETS):
                return _REFER
            if apex is None:  # the first apex found is the longest
                suffix = parent[at:] if at else parent
                if suffix in self._cuts:
                    return _REFER  # below a delegation: a referral, per name
                apex = self._apexes.get(suffix)
            at += length + 1
        zone = self._zones.get(apex)
        if zone is None:
            zone = self._zones[apex] = _ZoneReplies(apex)
        return zone

    def _learn(self) -> frozenset[bytes]:
        snapshot = self._snapshot
        names = (*snapshot.nodes, *snapshot.empty_non_terminals)
        self._apexes = {_wire(apex): apex for apex in snapshot.zones}
        self._cuts = frozenset(_wire(cut) for cut in snapshot.cuts)
        wires = frozenset(_wire(name) for name in names)
        self._existing = wires | self._apexes.keys() | self._cuts
        return self._existing

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
        return _Template(wire[:HEADER_LEN], question_length, wire[cut:])


def _wire(name: str) -> bytes:
    """The wire form of an absolute text name, as a query would carry it."""
    # Validation refuses the root zone, so no snapshot name is "." today.
    if name == ".":  # pragma: no cover - see above
        return b"\x00"
    labels = name[:-1].split(".")
    return b"".join(bytes((len(x),)) + x.encode() for x in labels) + b"\x00"


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
