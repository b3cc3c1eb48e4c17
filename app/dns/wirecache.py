"""The fast path: pre-encoded replies for the common query, patched per query.

A plain query (one question, no compression, at most an OPT whose only option
is a well-formed ECS) is recognised with a few byte operations. Its reply is
looked up by (name as on the wire in lowercase, type, EDNS kind): among
replies encoded once per snapshot from the full path's own answers when the
name does not depend on the client, or per deciding prefix of the client
(app.dns.prefixcache) when it does. Only the ID, the RD/CD bits, the
question's letter case and the ECS echo are patched in. Anything else
(unusual headers or options, malformed ECS, names that do not exist, replies
that need truncating) is left to the full path, which stays the reference
and the one judge of FORMERR.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from random import Random

from app.dns import codec
from app.dns.negatives import Negatives
from app.dns.prefixcache import PrefixCache
from app.dns.querystats import ClientTally, NegativeTally, Sent, count_client
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
    ECS_FAMILIES,
    OPTION_COOKIE,
    OPTION_ECS,
    OPTION_KEEPALIVE,
    OPTION_NSID,
    parse_query,
)
from app.domain.query import Locate
from app.domain.snapshot import Snapshot
from app.domain.variants import depends_on_client, variants

HEADER = 12
OPT_FIXED = 11  # root owner, type, class, TTL, RDLENGTH
RD_BIT, CD_BIT = 0x01, 0x10  # in the third and fourth header octets
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


# What a query's OPT asks of our OPT besides ECS: (NSID asked, COOKIE as
# (client, server), TCP keepalive data); None when it asks for none of these.
Asks = tuple[bool, tuple[bytes, bytes] | None, bytes | None]
Parsed = tuple[Key, int, int, bytes | None, Asks | None]
Extras = Callable[[Asks, tuple[str, int], bool], bytes | None]


def plain_query(wire: bytes) -> Parsed | None:
    """(key, end of the question, client's UDP payload or 0, ECS option data or
    None, other asks or None) for a plain query, or None to leave the packet to
    the full decoder."""
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
        return ((name, qtype, NO_EDNS), end, 0, None, None) if size == end else None
    opt = wire[end : end + OPT_FIXED]
    if len(opt) != OPT_FIXED or opt[0] != 0 or opt[1:3] != b"\x00\x29" or opt[6]:
        return None  # not an OPT owned by the root, or EDNS version above 0
    ecs = asks = None
    if size != end + OPT_FIXED or opt[9:11] != b"\x00\x00":
        options = _options(wire[end + OPT_FIXED - 2 :])
        if options is None:
            return None
        ecs, asks = options
    payload = (opt[3] << 8) | opt[4]
    kind = EDNS_DO if opt[7] & 0x80 else EDNS
    return (name, qtype, kind), end, payload, ecs, asks


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
        self.negative_tally: NegativeTally = {}
        self.clients: ClientTally = {}

    @property
    def remembered(self) -> int:
        """Questions with an entry of their own (names that do not exist never
        get one: their replies come from one per zone)."""
        return len(self._entries)

    @property
    def questions_seen(self) -> int:
        """Queries memoised by their octets (at most MAX_QUESTIONS)."""
        return len(self._questions)

    def reply(  # noqa: PLR0912 - the hot path, kept in one frame
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
            if negative is not None:
                opt = (ecs, 0, extra)
                return self._not_found(negative, opt, wire, parsed, udp, peer[0])
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
        sent = self._sent(reply, (ecs, scope, extra), wire, key, end, payload, udp)
        if sent is not None and self.counting:
            replies = self.replies_sent[udp]
            n = replies.get(reply)
            replies[reply] = 1 if n is None else n + 1
            # querystats.who_of, inlined: a call costs a third of the counting
            who = peer[0] if ecs is None or not ecs[2] else ecs
            clients = self.clients
            n = clients.get(who)
            if n is None:
                count_client(clients, who)
            else:
                clients[who] = n + 1
        return sent

    def _remember(self, question: bytes, parsed: Parsed) -> None:
        if len(self._questions) >= MAX_QUESTIONS:
            self._questions.clear()
        self._questions[question] = parsed

    def _not_found(
        self,
        negative: tuple[bytes, str | None],
        opt: tuple[bytes | None, int, bytes],
        wire: bytes,
        parsed: Parsed,
        udp: bool,
        host: str,
    ) -> bytes | None:
        reply, apex = negative
        key, end, payload, ecs, _ = parsed
        sent = self._sent(reply, opt, wire, key, end, payload, udp)
        if sent is not None and self.counting:
            counted = (apex, key[1], udp)
            tally = self.negative_tally
            tally[counted] = tally.get(counted, 0) + 1
            who = host if ecs is None or not ecs[2] else ecs  # as in reply()
            clients = self.clients
            n = clients.get(who)
            if n is None:
                count_client(clients, who)
            else:
                clients[who] = n + 1
        return sent

    def _sent(
        self,
        reply: bytes,
        opt: tuple[bytes | None, int, bytes],
        wire: bytes,
        key: Key,
        end: int,
        payload: int,
        udp: bool,
    ) -> bytes | None:
        """The stored reply made this query's: our OPT's options (`opt`: the
        ECS echoed with its scope, then the extras), ID, RD/CD and the
        question's letter case copied; None when it needs truncating."""
        ecs, scope, extra = opt
        if ecs is not None or extra:
            reply = with_options(reply, ecs, scope, extra)
        if udp and len(reply) > PLAIN_UDP_LIMIT:
            edns = key[2] != NO_EDNS
            if not edns or len(reply) > codec.udp_limit_of(payload):
                return None  # the full path truncates it properly
        flags = bytes((reply[2] | wire[2] & RD_BIT, reply[3] | wire[3] & CD_BIT))
        question = end - 4  # the asker's letter case, up to QTYPE
        return b"".join(
            (wire[:2], flags, reply[4:HEADER], wire[HEADER:question], reply[question:])
        )

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


def cached(
    current_snapshot: Callable[[], Snapshot],
    locate: Locate,
    locate_version: Callable[[], Hashable],
    retired: Callable[[WireCache], None] = lambda _: None,
    counting: bool = True,
) -> Callable[[], WireCache]:
    """The wire cache of whichever snapshot is current, rebuilt on each swap;
    `retired` sees each one replaced (its counts, before they go); without
    `counting` it counts nothing for the query metrics."""
    holder: list[WireCache] = []

    def get() -> WireCache:
        snapshot = current_snapshot()
        if not holder or holder[0].snapshot is not snapshot:
            if holder:
                retired(holder[0])
            holder[:] = [WireCache(snapshot, locate, locate_version, counting)]
        return holder[0]

    return get
