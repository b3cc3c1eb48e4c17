"""The fast path: pre-encoded replies for the common query, patched per query.

A plain query (one question, no compression, at most an OPT without options)
is recognised with a few byte operations; its reply is looked up by (name as
on the wire in lowercase, type, EDNS kind) among replies encoded once per
snapshot from the full path's own answers, and only the ID, the RD/CD bits and
the question's letter case are patched in. Anything else (ECS, unusual
headers, names that do not exist, client-dependent methods, replies that need
truncating) is left to the full path, which stays the reference.
"""

from __future__ import annotations

from bisect import bisect
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate
from random import Random

from app.dns import codec
from app.dns.wire import Edns, Malformed, Query, parse_query
from app.domain.snapshot import Snapshot
from app.domain.variants import variants

HEADER = 12
TYPE_OPT = 41
NO_EDNS, EDNS, EDNS_DO = 0, 1, 2
PLAIN_LIMIT = 512
RD_BIT, CD_BIT = 0x01, 0x10  # in the third and fourth header octets
MAX_ENTRIES = 200_000  # the names that exist, times a few types: bounded anyway

Key = tuple[bytes, int, int]


@dataclass(frozen=True, slots=True)
class Entry:
    """One or more replies (header ID 0, RD and CD clear, question lowercase)."""

    replies: tuple[bytes, ...]
    cumulative: tuple[float, ...] | None  # for a weighted pick; None: uniform

    def pick(self, rng: Random) -> bytes:
        if len(self.replies) == 1:
            return self.replies[0]
        if self.cumulative is None:
            return self.replies[rng.randrange(len(self.replies))]
        return self.replies[bisect(self.cumulative, rng.random() * self.cumulative[-1])]


UNCACHEABLE = Entry((), None)


def plain_query(wire: bytes) -> tuple[Key, int, int] | None:
    """(key, end of the question, client's UDP payload or 0) for a plain query,
    or None to leave the packet to the full decoder."""
    if len(wire) < HEADER + 5 or wire[2] & 0xFA or wire[3] & 0x4F:
        return None  # a response, another opcode, TC, Z or an rcode set
    if wire[4:10] != b"\x00\x01\x00\x00\x00\x00" or wire[10] or wire[11] > 1:
        return None
    at, size = HEADER, len(wire)
    while True:
        if at >= size:
            return None
        length = wire[at]
        if length == 0:
            break
        if length > 63:
            return None  # a pointer or an extended label: full path
        at += length + 1
    name_end, end = at + 1, at + 5
    if name_end - HEADER > 255 or size < end or wire[end - 2 : end] != b"\x00\x01":
        return None  # too long, cut short, or not class IN
    qtype = (wire[name_end] << 8) | wire[name_end + 1]
    name = wire[HEADER:name_end].lower()
    if wire[11] == 0:
        return ((name, qtype, NO_EDNS), end, 0) if size == end else None
    opt = wire[end : end + 11]
    if len(opt) != 11 or size != end + 11 or opt[0] != 0 or opt[1:3] != b"\x00\x29":
        return None  # an OPT with options (ECS, cookies…) or trailing data
    if opt[6] != 0 or opt[9:11] != b"\x00\x00":
        return None  # EDNS version above 0, or options
    payload = (opt[3] << 8) | opt[4]
    kind = EDNS_DO if opt[7] & 0x80 else EDNS
    return (name, qtype, kind), end, payload


class WireCache:
    """Pre-encoded replies for one snapshot, filled on first use."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self._entries: dict[Key, Entry] = {}

    def reply(self, wire: bytes, udp: bool, rng: Random) -> bytes | None:
        parsed = plain_query(wire)
        if parsed is None:
            return None
        key, end, payload = parsed
        entry = self._entries.get(key)
        if entry is None:
            entry = self._build(wire, key)
        if entry is UNCACHEABLE:
            return None
        reply = entry.pick(rng)
        if udp:
            limit = (
                PLAIN_LIMIT
                if key[2] == NO_EDNS
                else min(max(payload, PLAIN_LIMIT), codec.OUR_UDP_PAYLOAD)
            )
            if len(reply) > limit:
                return None  # the full path truncates it properly
        patched = bytearray(reply)
        patched[0:2] = wire[0:2]
        patched[2] |= wire[2] & RD_BIT
        patched[3] |= wire[3] & CD_BIT
        patched[HEADER : end - 4] = wire[HEADER : end - 4]  # the asker's letter case
        return bytes(patched)

    def _build(self, wire: bytes, key: Key) -> Entry:
        entry = UNCACHEABLE
        try:
            query = parse_query(bytes(wire[:2]) + b"\x00\x00" + wire[4:])
        except Malformed:
            query = None
        if query is not None:
            found = variants(self.snapshot, query.qname, query.qtype)
            if found is not None:
                lowered = tuple(label.lower() for label in query.labels)
                edns = None
                if key[2] != NO_EDNS:
                    edns = Edns(codec.OUR_UDP_PAYLOAD, 0, key[2] == EDNS_DO, None)
                template = Query(
                    id=0,
                    flags=0,
                    opcode=0,
                    qname=query.qname,
                    labels=lowered,
                    qtype=query.qtype,
                    qclass=1,
                    edns=edns,
                )
                replies = tuple(codec.encode(template, a, None) for a in found.answers)
                weights = found.weights
                entry = Entry(replies, tuple(accumulate(weights)) if weights else None)
        if len(self._entries) < MAX_ENTRIES:
            self._entries[key] = entry
        return entry


def cached(current_snapshot: Callable[[], Snapshot]) -> Callable[[], WireCache]:
    """The wire cache of whichever snapshot is current, rebuilt on each swap."""
    holder: list[WireCache] = []

    def get() -> WireCache:
        snapshot = current_snapshot()
        if not holder or holder[0].snapshot is not snapshot:
            holder[:] = [WireCache(snapshot)]
        return holder[0]

    return get
