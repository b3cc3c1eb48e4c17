"""The fast path: pre-encoded replies for the common query, patched per query.

A plain query (one question, no compression, at most an OPT whose only option
is a well-formed ECS) is recognised with a few byte operations. Its reply is
looked up by (name as on the wire in lowercase, type, EDNS kind): among
replies encoded once per snapshot from the full path's own answers when the
name does not depend on the client, or per deciding prefix of the client
(app.dns.prefixcache) when it does; a name that does not exist gets its
zone's negative reply (app.dns.negatives). Only the ID, the RD/CD bits, the
question's letter case and the ECS echo are patched in. Anything else
(unusual headers or options, malformed ECS, replies that need truncating) is
left to the full path, which stays the reference and the one judge of
FORMERR.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from random import Random
from typing import cast

from app.dns import codec
from app.dns.negatives import Negatives
from app.dns.prefixcache import PrefixCache
from app.dns.querystats import ClientTally, Sent, Who, count_client
from app.dns.replies import (
    EDNS,
    EDNS_DO,
    NO_EDNS,
    UNCACHEABLE,
    Entry,
    Key,
    encoded,
    with_options,
)
from app.dns.wire import (
    CD_BIT,
    ECS_FAMILIES,
    OPTION_COOKIE,
    OPTION_ECS,
    OPTION_KEEPALIVE,
    OPTION_NSID,
    RD_BIT,
    parse_query,
)
from app.domain.query import Locate
from app.domain.snapshot import Snapshot
from app.domain.variants import depends_on_client, variants

HEADER = 12
OPT_FIXED = 11  # root owner, type, class, TTL, RDLENGTH
PLAIN_UDP_LIMIT = codec.udp_limit_of(None)  # every reply this size or less fits
MAX_ENTRIES = 200_000  # the names that exist, times a few types: bounded anyway
# Queries seen, by their octets after the ID: a repeat skips plain_query. Only
# questions with a stored answer go in, and a full memo starts again, so it
# holds what is asked now whatever a flood of other questions does. Small on
# purpose: entries that die before the collector's oldest generation keep
# full collections rare (at 10,000, random ECS prefixes cost a 2 ms stall per
# clear and an 18 ms full collection every few seconds; the p99 showed both).
MAX_QUESTIONS = 2_000

BY_PREFIX = Entry((), None)  # a client-dependent name: see the PrefixCache
_NOBODY = object()  # the last client before any reply: equal to no client


# What a query's OPT asks of our OPT besides ECS: (NSID asked, COOKIE as
# (client, server), TCP keepalive data); None when it asks for none of these.
Asks = tuple[bool, tuple[bytes, bytes] | None, bytes | None]
Parsed = tuple[Key, int, int, bytes | None, Asks | None]
Extras = Callable[[Asks, tuple[str, int], bool], bytes | None]


# What follows a plain query's name, read: (QTYPE, EDNS kind, client's UDP
# payload or 0, ECS option data or None, other asks or None). One client's
# queries mostly end alike, so each ending met is read once, up to a bound:
# one table for queries without an additional record, one for those with one.
Ending = tuple[int, int, int, bytes | None, Asks | None]
MAX_ENDINGS = 1_000
_ENDINGS_BY_ARCOUNT: tuple[dict[bytes, Ending], dict[bytes, Ending]] = ({}, {})
# Header octets 2-11 of a plain query → its table of endings: QR, opcode, TC,
# Z and the rcode clear (AA, RD, RA, AD and CD may be set), one question, no
# answer or authority records, at most the OPT.
_PLAIN_HEADERS = {
    bytes((rd_aa, ra_ad_cd, 0, 1, 0, 0, 0, 0, 0, arcount)): _ENDINGS_BY_ARCOUNT[arcount]
    for rd_aa in (0x00, 0x01, 0x04, 0x05)
    for ra_ad_cd in (0x00, 0x10, 0x20, 0x30, 0x80, 0x90, 0xA0, 0xB0)
    for arcount in (0, 1)
}


def plain_query(wire: bytes) -> Parsed | None:
    """(key, end of the question, client's UDP payload or 0, ECS option data or
    None, other asks or None) for a plain query, or None to leave the packet to
    the full decoder."""
    endings = _PLAIN_HEADERS.get(wire[2:HEADER])
    if endings is None:
        return None  # a response, another opcode, TC, Z, an rcode or a count
    at = HEADER
    try:  # an index past the end: cut short
        length = wire[at]
        while length:
            if length > 63:
                return None  # a pointer or an extended label: full path
            at += length + 1
            length = wire[at]
    except IndexError:
        return None
    if at - HEADER > 254:
        return None  # a name over 255 octets
    ending = wire[at + 1 :]
    read = endings.get(ending)
    if read is None:
        read = _read_ending(ending, endings is _ENDINGS_BY_ARCOUNT[1])
        if read is None:
            return None
        if len(endings) >= MAX_ENDINGS:
            endings.clear()
        endings[ending] = read
    qtype, kind, payload, ecs, asks = read
    return (wire[HEADER : at + 1].lower(), qtype, kind), at + 5, payload, ecs, asks


def _read_ending(ending: bytes, with_opt: bool) -> Ending | None:
    """What follows a plain query's name: QTYPE, QCLASS IN and, `with_opt`,
    one OPT record; None for the full path."""
    if len(ending) < 4 or ending[2:4] != b"\x00\x01":
        return None  # cut short, or not class IN
    qtype = (ending[0] << 8) | ending[1]
    if not with_opt:
        return (qtype, NO_EDNS, 0, None, None) if len(ending) == 4 else None
    opt = ending[4 : 4 + OPT_FIXED]
    if len(opt) != OPT_FIXED or opt[0] != 0 or opt[1:3] != b"\x00\x29" or opt[6]:
        return None  # not an OPT owned by the root, or EDNS version above 0
    ecs = asks = None
    if len(ending) != 4 + OPT_FIXED or opt[9:11] != b"\x00\x00":
        options = _options(ending[4 + OPT_FIXED - 2 :])
        if options is None:
            return None
        ecs, asks = options
    kind = EDNS_DO if opt[7] & 0x80 else EDNS
    return qtype, kind, (opt[3] << 8) | opt[4], ecs, asks


def _options(rdata: bytes) -> tuple[bytes | None, Asks | None] | None:
    """(ECS option data, other asks) from the OPT's RDATA, given from its
    RDLENGTH on, when every option is well formed; else None: trailing bytes
    and every malformation go to the full path, whose decoder decides FORMERR.
    Options we do not know are ignored, as the full path ignores them."""
    size = len(rdata)
    if (rdata[0] << 8) | rdata[1] != size - 2:
        return None
    ecs = cookie = keepalive = None
    nsid = False
    at = 2
    while at < size:
        if at + 4 > size:
            return None
        code = (rdata[at] << 8) | rdata[at + 1]
        length = (rdata[at + 2] << 8) | rdata[at + 3]
        data = rdata[at + 4 : at + 4 + length]
        if len(data) != length:
            return None
        at += 4 + length
        if code == OPTION_ECS:
            if ecs is not None:
                return None
            ecs = _client_subnet(data)
            if ecs is None:
                return None
        elif code == OPTION_NSID:
            nsid = True
        elif code == OPTION_COOKIE:
            if cookie is not None or (length != 8 and not 16 <= length <= 40):
                return None
            cookie = (data[:8], data[8:])
        elif code == OPTION_KEEPALIVE:
            keepalive = data
    if nsid or cookie is not None or keepalive is not None:
        return ecs, (nsid, cookie, keepalive)
    return ecs, None


def _too_long(reply: bytes, key: Key, payload: int) -> bool:
    """Whether a UDP reply longer than PLAIN_UDP_LIMIT must be truncated: the
    client sent no EDNS, or a payload size it does not fit."""
    return key[2] == NO_EDNS or len(reply) > codec.udp_limit_of(payload)


def _client_subnet(option: bytes) -> bytes | None:
    """The ECS option data (family onwards) when well formed (RFC 7871 §6),
    else None for the full path to decide."""
    if len(option) < 4:
        return None
    bits = ECS_FAMILIES.get(option[1]) if option[0] == 0 else None
    source, scope = option[2], option[3]
    if bits is None or source > bits or scope > bits:
        return None
    if len(option) != 4 + (source + 7) // 8:
        return None
    if source % 8 and option[-1] & (0xFF >> (source % 8)):
        return None  # bits set past the source prefix: FORMERR on the full path
    return option


class WireCache:
    """Pre-encoded replies for one snapshot, filled on first use."""

    def __init__(
        self,
        snapshot: Snapshot,
        locate: Locate,
        locate_version: Callable[[], Hashable],
        counting: bool = True,
    ) -> None:
        self.snapshot = snapshot
        self.counting = counting
        self._entries: dict[Key, Entry] = {}
        self._questions: dict[bytes, Parsed] = {}
        self.by_prefix = PrefixCache(snapshot, locate, locate_version)
        self.negatives = Negatives(snapshot)
        # What was sent, for the query metrics (app.dns.querystats).
        self.replies_sent: Sent = ({}, {})  # [over TCP, over UDP]
        self._clients: ClientTally = {}
        # The client of the latest replies and how many it got in a row, not
        # yet in _clients: a resolver asks in bursts, and comparing with the
        # last client costs a third of a dictionary update.
        self._client: object = _NOBODY
        self._client_run = 0

    @property
    def remembered(self) -> int:
        """Questions with an entry of their own (names that do not exist never
        get one: their replies come from one per zone)."""
        return len(self._entries)

    @property
    def questions_seen(self) -> int:
        """Queries memoised by their octets (at most MAX_QUESTIONS)."""
        return len(self._questions)

    def reply(  # noqa: PLR0912, PLR0915 - the hot path, kept in one frame
        self,
        wire: bytes,
        peer: tuple[str, int],
        udp: bool,
        rng: Random,
        extras: Extras | None = None,
    ) -> bytes | None:
        """The reply from stored ones, or None for the full path. `extras`
        gives the options our OPT adds for what a query asks besides ECS
        (NSID, COOKIE, keepalive), encoded, or None for the full path."""
        question = wire[2:]
        parsed = self._questions.get(question)
        seen = parsed is not None
        if parsed is None:
            parsed = plain_query(wire)
            if parsed is None:
                return None
        key, end, payload, ecs, asks = parsed
        extra = b""
        if asks is not None:
            found = extras(asks, peer, udp) if extras is not None else None
            if found is None:
                return None
            extra = found
        entry = self._entries.get(key)
        if entry is None:
            negative = self.negatives.reply(wire, key, end)
            if negative is not None:  # fitted to the query already
                reply, zone = negative
                if ecs is not None or extra:
                    reply = with_options(reply, ecs, 0, extra)
                if (
                    udp
                    and len(reply) > PLAIN_UDP_LIMIT
                    and _too_long(reply, key, payload)
                ):
                    return None  # the full path truncates it properly
                if self.counting:
                    types = zone.sent[udp]
                    n = types.get(key[1])
                    types[key[1]] = 1 if n is None else n + 1
                    # querystats.who_of, inlined, and the run (see _client)
                    who = peer[0] if ecs is None or not ecs[2] else ecs
                    if who == self._client:
                        self._client_run += 1
                    else:
                        self._next_client(who)
                return reply
            entry = self._build(wire, key)
        if entry is BY_PREFIX:
            picked = self.by_prefix.pick(wire, key, ecs, peer[0], rng)
            if picked is None:
                return None
            reply, scope = picked
        elif entry is UNCACHEABLE:
            return None
        else:
            reply, scope = entry.pick(rng)
        if not seen:
            self._remember(question, parsed)
        stored = reply  # counted by the stored bytes, whose hash is kept
        if ecs is not None or extra:
            reply = with_options(reply, ecs, scope, extra)
        if udp and len(reply) > PLAIN_UDP_LIMIT and _too_long(reply, key, payload):
            return None  # the full path truncates it properly
        if self.counting:
            replies = self.replies_sent[udp]
            n = replies.get(stored)
            replies[stored] = 1 if n is None else n + 1
            # querystats.who_of, inlined: a call costs a third of the counting
            who = peer[0] if ecs is None or not ecs[2] else ecs
            if who == self._client:
                self._client_run += 1
            else:
                self._next_client(who)
        # The stored reply made this query's: ID, RD/CD and the question's
        # letter case (up to QTYPE) copied.
        flags = bytes((reply[2] | wire[2] & RD_BIT, reply[3] | wire[3] & CD_BIT))
        question_end = end - 4
        return b"".join(
            (
                wire[:2],
                flags,
                reply[4:HEADER],
                wire[HEADER:question_end],
                reply[question_end:],
            )
        )

    @property
    def clients(self) -> ClientTally:
        """Replies by client, the current run included (for a fold)."""
        if self._client_run:
            count_client(self._clients, cast(Who, self._client), self._client_run)
            self._client_run = 0
        return self._clients

    def _next_client(self, who: Who) -> None:
        """A reply for another client than the last one: the last one's run
        goes into the tally, and `who` starts one."""
        if self._client_run:
            count_client(self._clients, cast(Who, self._client), self._client_run)
        self._client, self._client_run = who, 1

    def _remember(self, question: bytes, parsed: Parsed) -> None:
        if len(self._questions) >= MAX_QUESTIONS:
            self._questions.clear()
        self._questions[question] = parsed

    def _build(self, wire: bytes, key: Key) -> Entry:
        entry = self._entry_for(wire, key)
        if len(self._entries) < MAX_ENTRIES:
            self._entries[key] = entry
        return entry

    def _entry_for(self, wire: bytes, key: Key) -> Entry:
        # plain_query lets through only what parse_query accepts, so this
        # cannot raise Malformed (if it did, the handler answers on the full path).
        query = parse_query(wire)
        if query.qtype in codec.ZONE_TRANSFERS:
            return UNCACHEABLE  # REFUSED on the full path
        if depends_on_client(self.snapshot, query.qname):
            return BY_PREFIX
        found = variants(self.snapshot, query.qname, query.qtype)
        return UNCACHEABLE if found is None else encoded(query, key[2], found)
