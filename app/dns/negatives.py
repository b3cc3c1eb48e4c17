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
the zone) or past it.
"""

from __future__ import annotations

from app.dns import codec
from app.dns.replies import Key, stored_query
from app.dns.wire import HEADER_LEN
from app.domain.answer import Answer
from app.domain.query import Rcode
from app.domain.records import negative_soa
from app.domain.snapshot import Snapshot

QUESTION_TAIL = 4  # QTYPE and QCLASS after the name
# The octets a label's text form carries unescaped; a name with any other
# octet in a label (a ".", a space, a zero) is left to the full path.
_PLAIN_OCTETS = b"abcdefghijklmnopqrstuvwxyz0123456789_-"


class _Template:
    """An encoded reply to the zone apex, cut after its question."""

    __slots__ = ("_fitted", "_pointers", "_tail", "header", "question_length")

    def __init__(self, header: bytes, question_length: int, tail: bytes) -> None:
        self.header = header
        self.question_length = question_length  # of the apex name on the wire
        self._tail = tail  # authority and additional sections
        self._pointers = _pointers(tail)  # offsets in `tail` of compression pointers
        self._fitted: dict[int, bytes] = {}  # tail by shift: at most 255 of them

    def fit(self, wire: bytes, end: int) -> bytes:
        """This reply for the question of `wire`, which ends at `end`."""
        delta = end - QUESTION_TAIL - HEADER_LEN - self.question_length
        tail = self._fitted.get(delta)
        if tail is None:
            tail = self._fitted[delta] = self._shifted(delta)
        return self.header + wire[HEADER_LEN:end] + tail

    def _shifted(self, delta: int) -> bytes:
        """The tail with every compression pointer moved by `delta` octets."""
        tail = bytearray(self._tail)
        for at in self._pointers:
            target = ((tail[at] & 0x3F) << 8 | tail[at + 1]) + delta
            tail[at : at + 2] = (0xC000 | target).to_bytes(2, "big")
        return bytes(tail)


class Negatives:
    """The negative replies of one snapshot, encoded on first use."""

    def __init__(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot
        self._templates: dict[tuple[str | None, int], _Template] = {}
        # Wire forms (lowercase) of the names that exist, and of the zone apexes,
        # so that a name is looked up without being decoded: built on first use.
        self._existing: frozenset[bytes] | None = None
        self._apexes: dict[bytes, str] = {}
        self._cuts: frozenset[bytes] = frozenset()  # delegation points

    def reply(self, wire: bytes, key: Key, end: int) -> tuple[bytes, str | None] | None:
        """The reply for a name that does not exist and the apex of its zone
        (None: no zone of ours, REFUSED), or None: the name exists (its
        answers are cached per name), or it needs the full path."""
        name = key[0]
        existing = self._existing
        if existing is None:
            existing = self._learn()
        if name in existing or key[1] in codec.ZONE_TRANSFERS:
            return None  # answers and NODATA are cached per name like the rest
        apexes, apex, at, octets = self._apexes, None, 0, 1
        cuts = self._cuts
        while length := name[at]:
            if apex is None:  # the first apex found is the longest
                suffix = name[at:] if at else name
                if cuts and suffix in cuts:
                    return None  # below a delegation: a referral, per name
                apex = apexes.get(suffix)
            at += length + 1
            octets += 1
        if len(name.translate(None, _PLAIN_OCTETS)) != octets:
            # A label octet outside the plain set, which the text form would
            # escape (or a length octet that looks like one): the full path.
            return None
        template = self._templates.get((apex, key[2]))
        if template is None:
            template = self._templates[(apex, key[2])] = self._encode(apex, key[2])
        return template.fit(wire, end), apex

    def _learn(self) -> frozenset[bytes]:
        snapshot = self._snapshot
        names = (*snapshot.nodes, *snapshot.empty_non_terminals)
        self._existing = frozenset(_wire(name) for name in names)
        self._apexes = {_wire(apex): apex for apex in snapshot.zones}
        self._cuts = frozenset(_wire(cut) for cut in snapshot.cuts)
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
