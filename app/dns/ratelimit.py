"""Response rate limiting (RRL) for UDP, with the semantics of BIND, Knot and NSD.

A spoofed flood makes an authoritative server send its replies to a victim;
RRL caps how many identical replies one network gets. Each (client netblock,
response class) pair has a token bucket of `rate` replies per second, holding
at most one second's worth (the burst). The netblock is the /24 of an IPv4
client and the /56 of an IPv6 one. The class is what the reply says:

* an answer or NODATA: the question's name and type;
* NXDOMAIN: the zone, so a random-name flood shares one bucket per zone;
* any error (REFUSED, FORMERR, SERVFAIL, NOTIMP): one bucket per netblock.

Past the rate a reply is dropped, except every `slip`-th, which goes out as an
empty reply with TC=1: a real resolver behind a spoofed address retries over
TCP (never limited) and gets its answer, while a victim gets no amplification.
A client that shows a valid server cookie (RFC 7873) has proven its address,
so it is never limited, as in BIND.

Under a flood larger than one process can answer, limiting replies is not
enough: the kernel drops queries from every client once the socket's queue
is full. So a netblock with more than SHED_AFTER times the rate of replies
limited within one second is shed for the rest of that second: its queries
are dropped before they are answered, except one in SHED_SAMPLE, which still
goes through the buckets (so slips still reach a real resolver behind it).

Only UDP is limited; the listener calls `shed` before answering and `admit`
for each reply when RRL is on, and neither when it is off.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from ipaddress import IPv4Network, IPv6Network, ip_address, ip_network

from app.dns.cookies import CookieSecrets
from app.dns.wire import HEADER_LEN, Malformed, parse_query

NXDOMAIN, NOERROR = 3, 0
_COOKIE_CODE = b"\x00\x0a"  # the COOKIE option's code on the wire
TC = 0x02  # in the third header octet
MAX_BUCKETS = 100_000  # (netblock, class) pairs tracked; past it, the idle go
IDLE_FORGET = 5.0  # seconds after which a full bucket can be forgotten
SHED_AFTER = 4  # times the rate of limited replies in a second: a flood
SHED_SAMPLE = 16  # while shedding, one query in this many is still answered


@dataclass(frozen=True, slots=True)
class RrlPolicy:
    rate: int = 0  # replies per second per (netblock, class); 0: off
    slip: int = 2  # every Nth limited reply goes out truncated; 0: never
    exempt: tuple[IPv4Network | IPv6Network, ...] = ()


@dataclass(slots=True)
class RrlCounts:
    """What RRL did, for /metrics."""

    limited: int = 0  # replies not sent as they were (dropped or slipped)
    slipped: int = 0  # of those, sent as an empty TC=1 reply
    exempted: int = 0  # over the rate but sent: exempt netblock or valid cookie
    shed: int = 0  # queries from a flooding netblock dropped before answering


@dataclass(slots=True)
class _Bucket:
    tokens: float
    stamp: float
    slips: int = 0


@dataclass
class RateLimiter:
    """Decides, reply by reply, what a UDP client gets under RRL."""

    policy: RrlPolicy
    cookies: CookieSecrets
    clock: Callable[[], float]
    counts: RrlCounts = field(default_factory=RrlCounts)
    _buckets: dict[tuple[bytes, bytes], _Bucket] = field(default_factory=dict)
    _exempt_hosts: dict[str, bool] = field(default_factory=dict)
    # Load shedding: limited replies per netblock in the current second, and
    # the netblocks past SHED_AFTER times the rate in it.
    _heat: dict[bytes, int] = field(default_factory=dict)
    shedding: set[bytes] = field(default_factory=set)
    _second: float = 0.0
    _passed: int = 0

    def shed(self, host: str, now: float) -> bool:
        """Whether to drop a query from `host` unanswered: its netblock has
        had more than SHED_AFTER times the rate limited this second, so its
        replies would be dropped anyway, and answering it first would cost
        the CPU that other clients' queries need (past it, the kernel drops
        queries from everyone). One in SHED_SAMPLE still goes through, so
        buckets, slips and exemptions keep working for that netblock."""
        if now - self._second >= 1.0:
            self._new_second(now)
        if not self.shedding:
            return False
        netblock = _netblock(host)
        if netblock not in self.shedding or self._exempt(host):
            return False
        self._passed += 1
        if self._passed >= SHED_SAMPLE:
            self._passed = 0
            return False
        self.counts.shed += 1
        return True

    def _new_second(self, now: float) -> None:
        self._second = now
        self._heat.clear()
        self.shedding.clear()

    def _heated(self, netblock: bytes) -> None:
        heat = self._heat.get(netblock, 0) + 1
        if len(self._heat) >= MAX_BUCKETS:
            self._heat.clear()
        self._heat[netblock] = heat
        if heat > SHED_AFTER * self.policy.rate:
            self.shedding.add(netblock)

    def admit(self, query: bytes, reply: bytes, host: str, now: float) -> bytes | None:
        """The reply to send for `query` from `host`: `reply` itself, an empty
        TC=1 reply (a slip), or None (dropped)."""
        netblock = _netblock(host)
        key = (netblock, response_class(reply))
        rate = self.policy.rate
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= MAX_BUCKETS:
                self._forget(now)
            bucket = self._buckets[key] = _Bucket(float(rate), now)
        else:
            bucket.tokens = min(rate, bucket.tokens + (now - bucket.stamp) * rate)
            bucket.stamp = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return reply
        if self._exempt(host) or self._proven(query, host, now):
            self.counts.exempted += 1
            return reply
        self.counts.limited += 1
        self._heated(netblock)
        slip = self.policy.slip
        if slip:
            bucket.slips += 1
            if bucket.slips >= slip:
                bucket.slips = 0
                self.counts.slipped += 1
                return truncated(reply)
        return None

    def _exempt(self, host: str) -> bool:
        known = self._exempt_hosts.get(host)
        if known is None:
            if len(self._exempt_hosts) >= MAX_BUCKETS:
                self._exempt_hosts.clear()
            try:
                address = ip_address(host.split("%", 1)[0])
            except ValueError:
                address = None
            known = self._exempt_hosts[host] = address is not None and any(
                address in net for net in self.policy.exempt
            )
        return known

    def _proven(self, query: bytes, host: str, now: float) -> bool:
        """Whether the query carries a server cookie we made for this host."""
        if query[10:12] == b"\x00\x00" or _COOKIE_CODE not in query[HEADER_LEN:]:
            return False  # no additional record, or no option code 10: no cookie
        try:
            edns = parse_query(query).edns
        except Malformed:
            return False
        if edns is None or edns.cookie is None or not edns.cookie[1]:
            return False
        client, server = edns.cookie
        return self.cookies.valid(client, server, host, self.clock())

    def _forget(self, now: float) -> None:
        """Drop buckets that have refilled (they hold nothing a new one would
        not); if none has, start again: a flood of new keys cannot grow memory."""
        idle = [
            key
            for key, bucket in self._buckets.items()
            if now - bucket.stamp > IDLE_FORGET
        ]
        if len(idle) < len(self._buckets) // 10:
            self._buckets.clear()
            return
        for key in idle:
            del self._buckets[key]


def _netblock(host: str) -> bytes:
    """The client's /24 (IPv4) or /56 (IPv6) as bytes."""
    try:
        if ":" not in host:
            return socket.inet_pton(socket.AF_INET, host)[:3]
        if host.startswith("::ffff:") and "." in host:  # IPv4 on a dual-stack socket
            return socket.inet_pton(socket.AF_INET, host[7:])[:3]
        return socket.inet_pton(socket.AF_INET6, host.split("%", 1)[0])[:7]
    except OSError:
        return b""


def _name_end(wire: bytes, at: int) -> int:
    """The offset after the uncompressed name at `at` (the question's)."""
    size = len(wire)
    while at < size:
        length = wire[at]
        if length == 0:
            return at + 1
        if length & 0xC0:
            return at + 2
        at += length + 1
    return size


def response_class(reply: bytes) -> bytes:
    """The RRL class of a reply: b"e" for errors, b"n" + zone for NXDOMAIN,
    b"a" + name and type for answers and NODATA (names in lowercase)."""
    if len(reply) < HEADER_LEN or reply[5] != 1:
        return b"e"  # no question: a header-only FORMERR or NOTIMP
    rcode = reply[3] & 0x0F
    if rcode not in (NOERROR, NXDOMAIN):
        return b"e"
    question_end = _name_end(reply, HEADER_LEN)
    if rcode == NOERROR:
        return b"a" + reply[HEADER_LEN : question_end + 2].lower()
    # NXDOMAIN: the SOA in the authority section is owned by the zone apex; it
    # is a pointer into the question, or a name written out.
    at = question_end + 4
    if at + 2 > len(reply):
        return b"n"
    if reply[at] & 0xC0 == 0xC0:
        target = (reply[at] & 0x3F) << 8 | reply[at + 1]
        return b"n" + reply[target:question_end].lower()
    return b"n" + reply[at : _name_end(reply, at)].lower()


def truncated(reply: bytes) -> bytes:
    """The reply emptied, with TC=1: ID, flags and question kept, no records."""
    if len(reply) < HEADER_LEN:
        return reply
    questions = reply[5]
    end = _name_end(reply, HEADER_LEN) + 4 if questions else HEADER_LEN
    counts = bytes((0, questions, 0, 0, 0, 0, 0, 0))
    return reply[:2] + bytes((reply[2] | TC, reply[3])) + counts + reply[HEADER_LEN:end]


def exempt_networks(texts: Iterable[str]) -> tuple[IPv4Network | IPv6Network, ...]:
    """Parse the exempt list (CIDR blocks or single addresses)."""
    return tuple(
        ip_network(text.strip(), strict=False) for text in texts if text.strip()
    )
