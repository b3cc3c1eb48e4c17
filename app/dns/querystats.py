"""Query metrics: plain counters where replies leave, labelled when scraped.

The fast path counts each stored reply it sends by the reply itself (one
dictionary increment on a bytes object whose hash is cached), and each
not-found reply by its zone and type; the full path keeps each decided answer
by the identity of its record data. A scrape, or the swap to a new
snapshot, folds the fast path's counts into labelled totals: a stored reply
is read back once for its name, type, rcode and answers, and each answer is
named by the endpoint it came from. Every label is bounded by the
configuration (zones, profiles, endpoints, the record types asked), never by
what clients send: a name outside every profile counts under profile "".

Where queries come from is counted by client (the ECS subnet where the query
carries one, else the source address) and placed in a country by GeoIP when
folded; at most MAX_CLIENTS clients are told apart between two folds (the
traffic loop folds every 10 s), the rest count as "unknown", like clients
GeoIP cannot place, so a flood from random sources costs no memory.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from ipaddress import IPv4Address, IPv6Address
from typing import Any, TypeVar

from app.dns.client import address_of, client_of
from app.dns.wire import HEADER_LEN, Malformed, read_name, text_of
from app.domain.answer import Answer
from app.domain.model import Endpoint
from app.domain.query import Locate, Rcode, RType
from app.domain.records import RData, Srv
from app.domain.snapshot import ProfilePlan, Snapshot

K = TypeVar("K", bound=Hashable)
QueryLabels = tuple[str, str, str, str]  # zone, profile, qtype, rcode
AnswerLabels = tuple[str, str, str]  # zone, profile, endpoint
# Who asked: ECS option data (family onwards) or a source host as the socket
# gives it (who_of); None for clients past the bound.
Who = bytes | str | None
# stored reply → times sent, one table per transport: [over TCP, over UDP]
Sent = tuple[dict[bytes, int], dict[bytes, int]]
# Not-found replies sent: by apex (None for no zone of ours), qtype → times,
# one table per transport as in Sent.
NegativeTally = dict[str | None, tuple[dict[int, int], dict[int, int]]]
ClientTally = dict[Who, int]  # by client, on either path
MAX_CLIENTS = 10_000  # clients told apart between two folds
# (name, type, rcode, over UDP, the identities of the answer's record data)
# → [times, that record data]: the data is held, so no identity is reused
# while its count lives, and an address is never hashed per query (hashing
# an IPv4Address formats it as text).
FullKey = tuple[str, int, int, bool, tuple[int, ...]]
MAX_FULL = 10_000
UNKNOWN_COUNTRY = "unknown"


def who_of(ecs: bytes | None, host: str) -> Who:
    """Whom a query is counted for, on both paths: its ECS subnet (the option
    data), unless it sent none or one of length 0 ("do not use my subnet"),
    else its source host. Placed in a country only when folded."""
    return host if ecs is None or not ecs[2] else ecs


def count_client(tally: ClientTally, who: Who, times: int = 1) -> None:
    """`times` queries from `who`, within the bound."""
    n = tally.get(who)
    if n is None and len(tally) >= MAX_CLIENTS:
        who, n = None, tally.get(None)
    tally[who] = (n or 0) + times


def type_label(qtype: int) -> str:
    try:
        return RType(qtype).name
    except ValueError:
        return "other"  # a flood of random types must not make new labels


def rcode_label(rcode: int) -> str:
    try:
        return Rcode(rcode).name
    except ValueError:
        return str(rcode)


class QueryStats:
    """Totals of one DNS process since it started."""

    def __init__(self, locate: Locate = lambda _: None) -> None:
        self.queries: dict[QueryLabels, int] = {}
        self.answers: dict[AnswerLabels, int] = {}
        self.paths: dict[tuple[str, str], int] = {}  # (transport, fast|full)
        self.countries: dict[str, int] = {}
        self.clients: ClientTally = {}  # the full path's, until placed
        # the full path's replies, unlabelled
        self._full: dict[FullKey, list[Any]] = {}
        self._full_of: Snapshot | None = None  # the snapshot they were decided on
        self._locate = locate
        self._named: tuple[Snapshot, dict[tuple[str, str], dict[str, str]]] | None = (
            None
        )

    def fold(
        self,
        snapshot: Snapshot,
        sent: Sent,
        negatives: NegativeTally,
        clients: ClientTally,
    ) -> None:
        """Turn the fast path's counts (of replies stored for `snapshot`, and
        of their clients) into labelled totals, and start them again. Replies
        and clients are counted apart: a key of both would cost a tuple per
        reply, and the totals never pair them."""
        for over_udp, replies in zip((False, True), sent, strict=True):
            for reply, times in replies.items():
                self._add(self.paths, ("udp" if over_udp else "tcp", "fast"), times)
                self._count_reply(snapshot, reply, times)
            replies.clear()
        for apex, by_transport in negatives.items():
            rcode = "NXDOMAIN" if apex is not None else "REFUSED"
            for over_udp, types in zip((False, True), by_transport, strict=True):
                path = ("udp" if over_udp else "tcp", "fast")
                for qtype, times in types.items():
                    labels = (apex or "", "", type_label(qtype), rcode)
                    self._add(self.queries, labels, times)
                    self._add(self.paths, path, times)
                types.clear()
        self.place(clients)

    def place(self, clients: ClientTally) -> None:
        """Count `clients` by their country, and start them again."""
        for who, times in clients.items():
            self._add(self.countries, self._country(who), times)
        clients.clear()

    def _country(self, who: Who) -> str:
        if who is None:
            return UNKNOWN_COUNTRY
        client = client_of(who, "") if isinstance(who, bytes) else client_of(None, who)
        if client is None:  # a source that is no address
            return UNKNOWN_COUNTRY
        facts = self._locate(address_of(client))
        return facts.country if facts is not None and facts.country else UNKNOWN_COUNTRY

    def full(
        self,
        snapshot: Snapshot,
        qname: str,
        qtype: int,
        result: Answer,
        udp: bool,
        who: Who = None,
    ) -> None:
        """One reply of the full path, to `who` (who_of): kept as it is,
        labelled when folded (the full path's time is the answer's, not the
        counting's)."""
        if snapshot is not self._full_of:
            self.fold_full()
            self._full_of = snapshot
        data = [r.rdata for r in result.answer]
        key = (qname, qtype, result.rcode, udp, tuple(map(id, data)))
        tally = self._full
        kept = tally.get(key)
        if kept is not None:
            kept[0] += 1
        else:
            if len(tally) >= MAX_FULL:
                self.fold_full()  # random names: label them now rather than grow
            tally[key] = [1, data]
        count_client(self.clients, who)

    def fold_full(self) -> None:
        """Label the full path's replies kept since the last fold."""
        snapshot = self._full_of
        if snapshot is not None:
            for (qname, qtype, rcode, udp, _), (times, data) in self._full.items():
                answered = _carried_in(data)
                self._count(snapshot, qname, qtype, rcode, answered, times)
                self._add(self.paths, ("udp" if udp else "tcp", "full"), times)
        self._full.clear()

    def _count_reply(self, snapshot: Snapshot, reply: bytes, times: int) -> None:
        try:
            qname, qtype, rcode, answered = describe(reply)
        except Malformed:
            return  # not one of ours: cannot happen, and must not stop a scrape
        self._count(snapshot, qname, qtype, rcode, answered, times)

    def _count(
        self,
        snapshot: Snapshot,
        qname: str,
        qtype: int,
        rcode: int,
        answered: Iterable[str],
        times: int,
    ) -> None:
        """`times` replies to one question, and the endpoints they carried."""
        zone, profile = self._owner(snapshot, qname)
        labels = (zone, profile, type_label(qtype), rcode_label(rcode))
        self._add(self.queries, labels, times)
        if not profile:
            return
        names = self._endpoint_names(snapshot).get((zone, profile), {})
        for value in answered:
            endpoint = names.get(value)
            if endpoint is not None:
                self._add(self.answers, (zone, profile, endpoint), times)

    @staticmethod
    def _owner(snapshot: Snapshot, qname: str) -> tuple[str, str]:
        """(zone, profile) a name belongs to; ("", "") outside every zone."""
        node = snapshot.nodes.get(qname)
        if node is not None:
            plan = node.profile or (node.srv[0] if node.srv else None)
            return node.zone.name, plan.profile.name if plan is not None else ""
        zone = snapshot.zone_of(qname)
        return (zone.name if zone is not None else ""), ""

    def _endpoint_names(
        self, snapshot: Snapshot
    ) -> dict[tuple[str, str], dict[str, str]]:
        """Per profile, what an answer carries (address, SRV target) → the
        endpoint it came from, a nested child's endpoints by their own name."""
        if self._named is not None and self._named[0] is snapshot:
            return self._named[1]
        found: dict[tuple[str, str], dict[str, str]] = {}
        for node in snapshot.nodes.values():
            plan = node.profile or (node.srv[0] if node.srv else None)
            if plan is not None:
                key = (node.zone.name, plan.profile.name)
                found.setdefault(key, {}).update(_carried(plan))
        self._named = (snapshot, found)
        return found

    @staticmethod
    def _add(counts: dict[K, int], key: K, n: int) -> None:
        counts[key] = counts.get(key, 0) + n


def _carried(plan: ProfilePlan) -> dict[str, str]:
    found: dict[str, str] = {}
    for child in plan.children.values():
        found.update(_carried(child))
    for e in plan.profile.endpoints:
        found.update(dict.fromkeys(_values_of(e, plan.fqdn), e.name))
    return found


def _values_of(e: Endpoint, fqdn: str) -> list[str]:
    values = [f"{e.name}.{fqdn}"]
    if e.address is not None:
        values.append(str(e.address))
    if e.target:
        values.append(e.target.lower())
    return values


def _carried_in(answer: list[RData]) -> list[str]:
    out: list[str] = []
    for data in answer:
        if isinstance(data, Srv):
            out.append(data.target.lower())
        elif isinstance(data, IPv4Address | IPv6Address):
            out.append(str(data))
        elif isinstance(data, str):  # a CNAME: a host endpoint's target
            out.append(data.lower())
    return out


def describe(reply: bytes) -> tuple[str, int, int, list[str]]:
    """(name, type, rcode, what the answer section carries: addresses, SRV
    and CNAME targets) of a reply tmdns encoded."""
    if len(reply) < HEADER_LEN:
        raise Malformed("shorter than a DNS header")
    rcode = reply[3] & 0xF
    ancount = int.from_bytes(reply[6:8], "big")
    labels, offset = read_name(reply, HEADER_LEN)
    qtype = int.from_bytes(reply[offset : offset + 2], "big")
    offset += 4
    answered: list[str] = []
    for _ in range(ancount):
        _, offset = read_name(reply, offset)
        rtype = int.from_bytes(reply[offset : offset + 2], "big")
        length = int.from_bytes(reply[offset + 8 : offset + 10], "big")
        start = offset + 10
        rdata = reply[start : start + length]
        if rtype == RType.A and length == 4:
            answered.append(str(IPv4Address(rdata)))
        elif rtype == RType.AAAA and length == 16:
            answered.append(str(IPv6Address(rdata)))
        elif rtype == RType.SRV and length > 6:
            target, _ = read_name(reply, start + 6)
            answered.append(text_of(target))
        elif rtype == RType.CNAME:
            target, _ = read_name(reply, start)
            answered.append(text_of(target))
        offset = start + length
    return text_of(labels), qtype, rcode, answered
