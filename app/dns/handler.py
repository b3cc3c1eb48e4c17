"""make_handler: one DNS message in, one reply (or silence) out. Never raises."""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable
from ipaddress import ip_address
from random import Random

from app.dns import codec
from app.dns.wire import HEADER_LEN, Malformed, Query, header_flags, parse_query
from app.dns.wirecache import cached
from app.domain.answer import answer
from app.domain.query import Locate, QueryContext, Rcode
from app.domain.snapshot import Snapshot

log = logging.getLogger(__name__)

Handler = Callable[[bytes, tuple[str, int], bool], bytes | None]
QR = 0x8000


def make_handler(
    current_snapshot: Callable[[], Snapshot],
    rng: Random,
    clock: Callable[[], float],
    locate: Locate,
    fast: bool = True,
    locate_version: Callable[[], Hashable] = lambda: 0,
) -> Handler:
    """Build the handler the UDP and TCP servers call for every message.

    With `fast`, plain queries are answered from pre-encoded replies
    (app.dns.wirecache); everything else, and every miss, takes the full path.
    `locate_version` changes when `locate` starts giving other answers (a new
    GeoIP database): replies decided by a location are dropped then.
    """
    wire_cache = cached(current_snapshot, locate, locate_version) if fast else None

    def handle(wire: bytes, peer: tuple[str, int], udp: bool) -> bytes | None:
        if wire_cache is not None:
            try:
                reply = wire_cache().reply(wire, peer, udp, rng)
            except Exception:  # the fast path must never cost an answer
                log.exception("fast path failed; answering on the full path")
                reply = None
            if reply is not None:
                return reply
        return full(wire, peer, udp)

    def full(wire: bytes, peer: tuple[str, int], udp: bool) -> bytes | None:
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
        try:
            return _reply(query, peer, udp)
        except Exception:  # a bug must cost one answer, never the server
            log.exception("failed to answer %s/%s", query.qname, query.qtype)
            return codec.rcode_only(query, Rcode.SERVFAIL)

    def _reply(query: Query, peer: tuple[str, int], udp: bool) -> bytes:
        if query.edns is not None and query.edns.version > codec.EDNS_VERSION:
            return codec.rcode_only(query, codec.BADVERS)
        if query.qclass != codec.CLASS_IN or query.qtype in codec.ZONE_TRANSFERS:
            return codec.rcode_only(query, Rcode.REFUSED)
        result = answer(
            current_snapshot(), query.qname, query.qtype, _context(query, peer), rng
        )
        return codec.encode(query, result, codec.udp_limit(query) if udp else None)

    def _context(query: Query, peer: tuple[str, int]) -> QueryContext:
        """ECS decides when it carries a prefix; otherwise the packet's source does
        (RFC 7871 §7.1.2: a /0 source asks us not to use client information)."""
        ecs = query.edns.ecs if query.edns is not None else None
        if ecs is not None and ecs.source_prefix > 0:
            return QueryContext(ecs.address, ecs.source_prefix, clock(), locate)
        source = ip_address(peer[0].split("%")[0])
        if source.version == 6 and source.ipv4_mapped is not None:
            source = source.ipv4_mapped  # a dual-stack socket's IPv4 client
        prefix = source.max_prefixlen if ecs is None else 0
        return QueryContext(source, prefix, clock(), locate)

    return handle
