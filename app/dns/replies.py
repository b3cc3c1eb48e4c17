"""Pre-encoded replies, as the fast path keeps them. No routing decisions here.

A stored reply has header ID 0, RD and CD clear, the question in lowercase,
and, when the query had EDNS, our OPT last with no options: the per-query
parts (ID, flags, letter case, ECS echo) are patched in on the way out.
"""

from __future__ import annotations

from bisect import bisect
from dataclasses import dataclass
from itertools import accumulate
from random import Random

from app.dns import codec
from app.dns.wire import Edns, Query
from app.domain.variants import Variants

NO_EDNS, EDNS, EDNS_DO = 0, 1, 2  # the EDNS kinds a plain query can have
EDNS_KINDS = (NO_EDNS, EDNS, EDNS_DO)

Key = tuple[bytes, int, int]  # (name as on the wire in lowercase, qtype, EDNS kind)


@dataclass(frozen=True, slots=True)
class Entry:
    """The replies one question can get, each with the ECS scope it is echoed
    with (when the query carries ECS), and how likely each is."""

    replies: tuple[tuple[bytes, int], ...]
    cumulative: tuple[float, ...] | None  # for a weighted pick; None: uniform

    def pick(self, rng: Random) -> tuple[bytes, int]:
        if len(self.replies) == 1:
            return self.replies[0]
        if self.cumulative is None:
            return self.replies[rng.randrange(len(self.replies))]
        return self.replies[bisect(self.cumulative, rng.random() * self.cumulative[-1])]


UNCACHEABLE = Entry((), None)  # a question the full path must answer each time


def stored_query(qname: str, labels: tuple[bytes, ...], qtype: int, kind: int) -> Query:
    """The query a stored reply is encoded for: ID 0, no flags, the question
    in lowercase, and for an EDNS kind our OPT without options."""
    edns = None
    if kind != NO_EDNS:
        edns = Edns(codec.OUR_UDP_PAYLOAD, 0, kind == EDNS_DO, None)
    return Query(
        id=0,
        flags=0,
        opcode=0,
        qname=qname,
        labels=tuple(label.lower() for label in labels),
        qtype=qtype,
        qclass=1,
        edns=edns,
    )


# Encoded replies by what goes on the wire (not the ECS scope, patched in per
# query): clients in many networks mostly get one of a few answers.
WireMemo = dict[tuple[object, ...], bytes]
MAX_MEMO = 10_000


def encoded(
    query: Query, kind: int, found: Variants, memo: WireMemo | None = None
) -> Entry:
    """Encode every variant once, as the full path would for a query of this
    EDNS kind without ECS (which is patched in per query); with a memo, an
    answer already encoded for another client is not encoded again."""
    template = stored_query(query.qname, query.labels, query.qtype, kind)
    replies = []
    for a in found.answers:
        if memo is None:
            replies.append((codec.encode(template, a, None), a.scope))
            continue
        what: tuple[object, ...] = (query.qname, query.qtype, kind, a.rcode)
        what += (a.authoritative, a.answer, a.authority, a.additional)
        wire = memo.get(what)
        if wire is None:
            if len(memo) >= MAX_MEMO:
                memo.clear()
            wire = memo[what] = codec.encode(template, a, None)
        replies.append((wire, a.scope))
    weights = found.weights
    return Entry(tuple(replies), tuple(accumulate(weights)) if weights else None)


def with_options(reply: bytes, ecs: bytes | None, scope: int, extra: bytes) -> bytes:
    """The reply with options in our OPT: the client's ECS echoed with our
    scope (RFC 7871 §7.2.1), then `extra` (encoded options, as the full path
    orders them). Our OPT is the last record of a stored reply (codec adds it
    after the additional section) and has no RDATA yet: its RDLENGTH is the
    last two octets, and the options go after them."""
    rdata = extra
    if ecs is not None:
        echoed = ecs[:3] + bytes((scope,)) + ecs[4:]
        head = codec.OPTION_ECS.to_bytes(2, "big") + len(echoed).to_bytes(2, "big")
        rdata = head + echoed + extra
    return reply[:-2] + len(rdata).to_bytes(2, "big") + rdata


def option(code: int, data: bytes) -> bytes:
    """One EDNS option on the wire."""
    return code.to_bytes(2, "big") + len(data).to_bytes(2, "big") + data
