"""make_handler: one DNS message in, one reply (or silence) out. Never raises."""

from __future__ import annotations

import logging
from collections.abc import Callable
from ipaddress import ip_address
from random import Random

from app.dns import codec
from app.domain.answer import answer
from app.domain.query import QueryContext, Rcode
from app.domain.snapshot import Snapshot

log = logging.getLogger(__name__)

Handler = Callable[[bytes, tuple[str, int], bool], bytes | None]
CLASS_IN = 1


def make_handler(
    current_snapshot: Callable[[], Snapshot], rng: Random, clock: Callable[[], float]
) -> Handler:
    """Build the handler the UDP and TCP servers call for every message."""

    def handle(wire: bytes, peer: tuple[str, int], udp: bool) -> bytes | None:
        try:
            request = codec.decode(wire)
        except codec.Malformed:
            return codec.formerr_for(wire)
        try:
            return _reply(request, peer, udp)
        except Exception:  # a bug must cost one answer, never the server
            log.exception("failed to answer %s/%s", request.qname, request.qtype)
            return codec.rcode_only(request, Rcode.SERVFAIL)

    def _reply(
        request: codec.Request, peer: tuple[str, int], udp: bool
    ) -> bytes | None:
        if request.is_response:
            return None
        if request.opcode != codec.OPCODE_QUERY:
            return codec.rcode_only(request, Rcode.NOTIMP)
        if request.question_count != 1:
            return codec.rcode_only(request, Rcode.FORMERR)
        if request.qclass != CLASS_IN:
            return codec.rcode_only(request, Rcode.REFUSED)
        ctx = QueryContext(client=ip_address(peer[0].split("%")[0]), now=clock())
        result = answer(current_snapshot(), request.qname, request.qtype, ctx, rng)
        return codec.encode(request, result, udp)

    return handle
