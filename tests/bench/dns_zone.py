"""The zone every server in `make bench` serves: one set of names and record data,
the queries dnsperf sends, and the answers each server must give before it is
measured."""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable
from dataclasses import dataclass
from random import Random

import dns.edns
import dns.exception
import dns.flags
import dns.message
import dns.query
import dns.rcode
import dns.rdatatype

ZONE = "tm.example."
NS = "ns1.tm.example."
NS_ADDRESS = "127.0.0.1"
HOSTMASTER = "hostmaster.tm.example."
TTL = 60  # every routed name and SRV record
SOA_TTL = 3600
SOA_TIMERS = (3600, 600, 604800, 60)  # refresh, retry, expire, minimum

PRIORITY = ("127.0.0.1", "127.0.0.2")  # primary, secondary
WEIGHTED = (("w1", "127.0.1.1", 50), ("w2", "127.0.1.2", 30), ("w3", "127.0.1.3", 20))
MULTI = ("127.0.2.1", "127.0.2.2", "127.0.2.3", "127.0.2.4")
MULTI_RETURN = 2
SIP = (("s1", "127.0.4.1", 50), ("s2", "127.0.4.2", 30), ("s3", "127.0.4.3", 20))
SIP_SERVICE, SIP_PORT, SIP_PRIORITY = "_sip._udp", 5060, 10
NET_RANGE, NET_INSIDE, NET_OTHER = "10.0.0.0/8", "127.0.3.1", "127.0.3.2"
ECS_CLIENT = ("10.1.0.0", 16)  # an ECS client inside NET_RANGE


@dataclass(frozen=True)
class Case:
    """One measured name: a row of the table."""

    key: str
    label: str
    qname: str
    qtype: str
    ecs: tuple[str, int] | None = None
    # When set, dnsperf asks this many different names below `qname` (none of
    # which exists): a random-subdomain flood, the commonest attack.
    random_names: int = 0
    # When set, each query carries ECS for one of this many random /24s, as a
    # resolver serving many networks sends them: the per-prefix caches churn.
    random_ecs: int = 0
    tcp: bool = False  # dnsperf -m tcp: queries pipelined on few connections
    seed: int = 7  # of the random names or prefixes: another seed, others

    @property
    def binary(self) -> bool:
        """Whether dnsperf reads whole messages (-B) rather than text lines."""
        return bool(self.random_ecs)

    def query_data(self) -> bytes:
        """dnsperf's data file: one question, the random names in turn, or
        messages with random ECS prefixes in its length-prefixed format."""
        rng = Random(self.seed)
        if self.random_ecs:
            messages = []
            for _ in range(self.random_ecs):
                address = ipaddress.IPv4Address(rng.randrange(1 << 24, 224 << 24))
                option = dns.edns.ECSOption(str(address), 24)
                query = dns.message.make_query(
                    self.qname, self.qtype, use_edns=0, options=[option]
                )
                wire = query.to_wire()
                messages.append(len(wire).to_bytes(2, "big") + wire)
            return b"".join(messages)
        if not self.random_names:
            return f"{self.qname} {self.qtype}\n".encode()
        return "".join(
            f"r{rng.randrange(1 << 40):x}.{self.qname} {self.qtype}\n"
            for _ in range(self.random_names)
        ).encode()


CASES = (
    Case("priority", "priority A", "prio.tm.example.", "A"),
    Case("weighted", "weighted A", "weighted.tm.example.", "A"),
    Case("multivalue", "multivalue A (2 of 4)", "multi.tm.example.", "A"),
    Case("srv", "SRV (3 targets)", f"{SIP_SERVICE}.sip.tm.example.", "SRV"),
    Case("subnet", "subnet A, ECS /16", "net.tm.example.", "A", ECS_CLIENT),
    Case("soa", "apex SOA", ZONE, "SOA"),
    Case("random", "random names (NXDOMAIN)", ZONE, "A", random_names=200_000),
    Case(
        "random-ecs",
        "geo A, random ECS /24s",
        "geo.tm.example.",
        "A",
        random_ecs=100_000,
    ),
    Case("tcp", "priority A over TCP", "prio.tm.example.", "A", tcp=True),
)


def sip_target(label: str) -> str:
    return f"{label}.sip.{ZONE}"


def ecs_option_hex(address: str, prefix: int) -> str:
    """The ECS option (RFC 7871) as dnsperf's `-E 8:<hex>` wants it."""
    packed = ipaddress.IPv4Address(address).packed[: (prefix + 7) // 8]
    return f"8:0001{prefix:02x}00{packed.hex()}"


class WrongAnswer(AssertionError):
    pass


def _ask(
    port: int,
    qname: str,
    qtype: str,
    ecs: tuple[str, int] | None = None,
    tcp: bool = False,
) -> dns.message.Message:
    options: list[dns.edns.Option] = [dns.edns.ECSOption(*ecs)] if ecs else []
    query = dns.message.make_query(qname, qtype, use_edns=0, options=options)
    send = dns.query.tcp if tcp else dns.query.udp
    reply = send(query, "127.0.0.1", port=port, timeout=2)
    if reply.rcode() != dns.rcode.NOERROR or not reply.flags & dns.flags.AA:
        raise WrongAnswer(f"{qname} {qtype}: {dns.rcode.to_text(reply.rcode())}")
    return reply


def _addresses(reply: dns.message.Message) -> list[str]:
    return [rd.to_text() for rrset in reply.answer for rd in rrset]


def _expect(condition: bool, what: str) -> None:
    if not condition:
        raise WrongAnswer(what)


def check_priority(port: int, _: int, __: bool) -> None:
    for _i in range(20):  # PowerDNS picks at random until its first health check
        got = _addresses(_ask(port, "prio.tm.example.", "A"))
        _expect(got == [PRIORITY[0]], f"priority: {got}")


def check_weighted(port: int, _: int, __: bool) -> None:
    seen: set[str] = set()
    for _i in range(40):
        got = _addresses(_ask(port, "weighted.tm.example.", "A"))
        _expect(len(got) == 1 and got[0] in {a for _n, a, _w in WEIGHTED}, str(got))
        seen.update(got)
    _expect(len(seen) > 1, f"weighted: always {seen}")


def check_multivalue(port: int, _: int, __: bool) -> None:
    seen: set[str] = set()
    for _i in range(40):
        got = _addresses(_ask(port, "multi.tm.example.", "A"))
        _expect(
            len(set(got)) == len(got) == MULTI_RETURN and set(got) <= set(MULTI),
            f"multivalue: {got}",
        )
        seen.update(got)
    _expect(len(seen) > MULTI_RETURN, f"multivalue: only {seen}")


def check_srv(port: int, _: int, additional: bool) -> None:
    reply = _ask(port, f"{SIP_SERVICE}.sip.tm.example.", "SRV")
    got = {
        (rd.priority, rd.weight, rd.port, rd.target.to_text())
        for rrset in reply.answer
        for rd in rrset
    }
    want = {(SIP_PRIORITY, w, SIP_PORT, sip_target(n)) for n, _a, w in SIP}
    _expect(got == want, f"SRV: {got}")
    glue = {
        (rrset.name.to_text(), rd.to_text())
        for rrset in reply.additional
        if rrset.rdtype == dns.rdatatype.A
        for rd in rrset
    }
    _expect(
        glue == ({(sip_target(n), a) for n, a, _w in SIP} if additional else set()),
        f"SRV additional: {glue}",
    )


def check_subnet(port: int, _: int, __: bool) -> None:
    inside = _addresses(_ask(port, "net.tm.example.", "A", ECS_CLIENT))
    _expect(inside == [NET_INSIDE], f"subnet with ECS {ECS_CLIENT}: {inside}")
    other = _addresses(_ask(port, "net.tm.example.", "A"))  # from 127.0.0.1
    _expect(other == [NET_OTHER], f"subnet without ECS: {other}")


def check_geo(port: int, _: int, __: bool) -> None:
    """tmdns answers geo.tm.example. by GeoIP; gdnsd and PowerDNS, which have
    no GeoIP database here, by the subnet map of net.tm.example.: the two
    answers are the same addresses, so every server does work per prefix."""
    for ecs in (("2.0.0.0", 24), ECS_CLIENT):
        got = _addresses(_ask(port, "geo.tm.example.", "A", ecs))
        _expect(len(got) == 1 and got[0] in {NET_INSIDE, NET_OTHER}, f"geo: {got}")


def check_soa(port: int, serial: int, _: bool) -> None:
    for tcp in (False, True):
        reply = _ask(port, ZONE, "SOA", tcp=tcp)
        rds = [rd for rrset in reply.answer for rd in rrset]
        _expect(len(rds) == 1, f"SOA: {rds}")
        soa = rds[0]
        got = (
            soa.mname.to_text(),
            soa.rname.to_text(),
            soa.serial,
            (soa.refresh, soa.retry, soa.expire, soa.minimum),
        )
        _expect(got == (NS, HOSTMASTER, serial, SOA_TIMERS), f"SOA: {got}")


CHECKS: dict[str, Callable[[int, int, bool], None]] = {
    "priority": check_priority,
    "weighted": check_weighted,
    "multivalue": check_multivalue,
    "srv": check_srv,
    "subnet": check_subnet,
    "geo": check_geo,
    "soa": check_soa,
}


def wait_until_correct(
    port: int,
    serial: int,
    srv_additional: bool,
    alive: Callable[[], bool],
    limit: float = 30.0,
) -> None:
    """Poll every check until all pass (or raise after `limit` seconds)."""
    deadline = time.monotonic() + limit
    while True:
        try:
            for check in CHECKS.values():
                check(port, serial, srv_additional)
            return
        except (WrongAnswer, OSError, dns.exception.DNSException) as problem:
            if not alive():
                raise RuntimeError("the server exited during start-up") from problem
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"wrong answers after {limit:g} s: {problem}"
                ) from None
            time.sleep(0.5)
