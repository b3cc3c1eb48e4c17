"""DnsHandler: one DNS message in, one reply (or silence) out. Never raises."""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable
from random import Random

from app.dns import codec
from app.dns.client import client_of, context_of
from app.dns.cookies import CookieSecrets, reply_cookie
from app.dns.querystats import QueryStats, who_of
from app.dns.replies import option
from app.dns.wire import HEADER_LEN, Malformed, Query, header_flags, parse_query
from app.dns.wirecache import Asks, WireCache
from app.domain.answer import answer
from app.domain.draw import RandomDraw
from app.domain.query import Locate, Rcode
from app.domain.snapshot import Snapshot

log = logging.getLogger(__name__)

Handler = Callable[[bytes, tuple[str, int], bool], bytes | None]
QR = 0x8000
MAX_COOKIE_REPLIES = 10_000


class DnsHandler:
    """The handler the UDP and TCP servers call for every message: one DNS
    message in, one reply (or silence) out. Never raises.

    With `fast`, plain queries are answered from pre-encoded replies
    (app.dns.wirecache); everything else, and every miss, takes the full path.
    `locate_version` changes when `locate` starts giving other answers (a new
    GeoIP database): replies decided by a location are dropped then.
    """

    def __init__(
        self,
        current_snapshot: Callable[[], Snapshot],
        rng: Random,
        clock: Callable[[], float],
        locate: Locate,
        fast: bool = True,
        locate_version: Callable[[], Hashable] = lambda: 0,
        nsid: bytes | None = None,
        cookies: CookieSecrets | None = None,
        tcp_idle_timeout: float = 10.0,
        query_metrics: bool = True,
    ) -> None:
        self._snapshot = current_snapshot
        self.stats = QueryStats(locate)
        self._counting = query_metrics
        self._nsid = nsid
        # RFC 7828: the idle timeout in units of 100 ms, as the option carries it.
        self._keepalive = min(0xFFFF, int(tcp_idle_timeout * 10)).to_bytes(2, "big")
        self._cookies = cookies or CookieSecrets.random()
        self._cookie_replies: dict[tuple[tuple[bytes, bytes], str, int], bytes] = {}
        self._rng, self._clock, self._locate = rng, clock, locate
        self._draw = RandomDraw(rng)  # the routing methods' one random choice
        self._fast = fast
        self._locate_version = locate_version
        self._wire_cache: WireCache | None = None  # of the snapshot last served

    def __call__(self, wire: bytes, peer: tuple[str, int], udp: bool) -> bytes | None:
        if self._fast:
            try:
                cache = self._wire_cache
                if cache is None or cache.snapshot is not self._snapshot():
                    cache = self._fresh_cache()
                reply = cache.reply(wire, peer, udp, self._rng, self._extras)
            except Exception:  # the fast path must never cost an answer
                log.exception("fast path failed; answering on the full path")
                reply = None
            if reply is not None:
                return reply
        return self.full(wire, peer, udp)

    def _fresh_cache(self) -> WireCache:
        """The wire cache of the current snapshot, the replaced one's counts
        folded into the totals before it goes."""
        if self._wire_cache is not None:
            self._fold(self._wire_cache)
        self._wire_cache = WireCache(
            self._snapshot(), self._locate, self._locate_version, self._counting
        )
        return self._wire_cache

    def totals(self) -> QueryStats:
        """The query totals, the fast path's counts folded in (for a scrape)."""
        if self._wire_cache is not None:
            self._fold(self._wire_cache)
        self.stats.fold_full()
        self.stats.place(self.stats.clients)
        return self.stats

    def _fold(self, cache: WireCache) -> None:
        self.stats.fold(
            cache.snapshot, cache.replies_sent, cache.negatives.sent, cache.clients
        )

    def full(self, wire: bytes, peer: tuple[str, int], udp: bool) -> bytes | None:
        """The full path: decode, answer(), encode."""
        if len(wire) < HEADER_LEN:
            return None  # not even an ID to answer to
        qid, flags = header_flags(wire)
        if flags & QR:
            return None  # a response: answering it could start a loop
        opcode = (flags >> 11) & 0xF
        if opcode != codec.OPCODE_QUERY:
            # Other opcodes give their sections other meanings (UPDATE's zone
            # section, say): answer without echoing anything but the opcode.
            return codec.header_only(qid, opcode, Rcode.NOTIMP)
        try:
            query = parse_query(wire)
        except Malformed:
            return codec.header_only(qid, opcode, Rcode.FORMERR)
        edns = query.edns
        if not udp and edns is not None and edns.keepalive:
            # RFC 7828 §3.2.2: a client never sends a timeout of its own.
            return codec.rcode_only(query, Rcode.FORMERR)
        try:
            return self._reply(query, peer, udp, self._options(query, peer, udp))
        except Exception:  # a bug must cost one answer, never the server
            log.exception("failed to answer %s/%s", query.qname, query.qtype)
            return codec.rcode_only(query, Rcode.SERVFAIL)

    def _options(self, query: Query, peer: tuple[str, int], udp: bool) -> codec.Options:
        """What our OPT adds for this query on the full path."""
        edns = query.edns
        if edns is None or not (edns.nsid or edns.cookie or edns.keepalive is not None):
            return ()
        return self._extra_options(edns.nsid, edns.cookie, edns.keepalive, peer, udp)

    def _extras(self, asks: Asks, peer: tuple[str, int], udp: bool) -> bytes | None:
        """The same options for the fast path, encoded; None for a query the
        full path must answer (a keepalive option carrying a value over TCP)."""
        nsid, cookie, keepalive = asks
        if keepalive and not udp:
            return None  # FORMERR, decided on the full path
        chosen = self._extra_options(nsid, cookie, keepalive, peer, udp)
        return b"".join(option(code, data) for code, data in chosen)

    def _extra_options(
        self,
        nsid: bool,
        cookie: tuple[bytes, bytes] | None,
        keepalive: bytes | None,
        peer: tuple[str, int],
        udp: bool,
    ) -> codec.Options:
        """NSID when asked and configured (RFC 5001), a COOKIE for a client
        that sent one (RFC 7873), and over TCP our idle timeout for a client
        that asks (RFC 7828; never on UDP, where the option is ignored)."""
        extra: list[tuple[int, bytes]] = []
        if nsid and self._nsid:
            extra.append((codec.OPTION_NSID, self._nsid))
        if cookie is not None:
            extra.append((codec.OPTION_COOKIE, self._cookie(cookie, peer[0])))
        if keepalive is not None and not udp:
            extra.append((codec.OPTION_KEEPALIVE, self._keepalive))
        return tuple(extra)

    def _cookie(self, cookie: tuple[bytes, bytes], host: str) -> bytes:
        """The COOKIE option data of our reply. It depends on the whole second
        only, so a client's repeats within it cost one dictionary lookup
        rather than a SipHash (about 30 µs in Python)."""
        second = int(self._clock())
        key = (cookie, host, second)
        data = self._cookie_replies.get(key)
        if data is None:
            if len(self._cookie_replies) >= MAX_COOKIE_REPLIES:
                self._cookie_replies.clear()
            client, server = cookie
            data = reply_cookie(self._cookies, client, server, host, second)
            self._cookie_replies[key] = data
        return data

    def _reply(
        self, query: Query, peer: tuple[str, int], udp: bool, extra: codec.Options
    ) -> bytes:
        if query.edns is not None and query.edns.version > codec.EDNS_VERSION:
            return codec.rcode_only(query, codec.BADVERS, extra)
        if query.qclass != codec.CLASS_IN or query.qtype in codec.ZONE_TRANSFERS:
            return codec.rcode_only(query, Rcode.REFUSED, extra)
        ecs = query.edns.ecs if query.edns is not None else None
        ecs_data = ecs.data if ecs is not None else None
        ctx = context_of(client_of(ecs_data, peer[0]), self._clock, self._locate)
        snapshot = self._snapshot()
        result = answer(snapshot, query.qname, query.qtype, ctx, self._draw)
        if self._counting:
            who = who_of(ecs_data, peer[0])
            self.stats.full(snapshot, query.qname, query.qtype, result, udp, who)
        limit = codec.udp_limit(query) if udp else None
        return codec.encode(query, result, limit, extra)


def make_handler(
    current_snapshot: Callable[[], Snapshot],
    rng: Random,
    clock: Callable[[], float],
    locate: Locate,
    fast: bool = True,
    locate_version: Callable[[], Hashable] = lambda: 0,
    nsid: bytes | None = None,
    cookies: CookieSecrets | None = None,
    tcp_idle_timeout: float = 10.0,
) -> Handler:
    """A DnsHandler, typed as the servers take it."""
    return DnsHandler(
        current_snapshot,
        rng,
        clock,
        locate,
        fast,
        locate_version,
        nsid,
        cookies,
        tcp_idle_timeout,
    )
