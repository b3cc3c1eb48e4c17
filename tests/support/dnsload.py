"""A steady DNS query load on several instances, for the fault suite and the
soak: paced UDP queries with many in flight, every outcome counted per
instance, the failures kept with their times so a test can look at a window,
and an optional judge of wrong answers. Loopback only; it stops by itself.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import dns.exception
import dns.message
import dns.query
import dns.rcode
import dns.rdatatype

HOST = "127.0.0.1"  # loopback only

# The outcome of one query, as the load counts it.
ANSWER, NODATA, NXDOMAIN, SERVFAIL, REFUSED, OTHER, TIMEOUT, WRONG, MALFORMED = (
    "answer",
    "nodata",
    "nxdomain",
    "servfail",
    "refused",
    "other",
    "timeout",
    "wrong",
    "malformed",
)
RCODES = {
    dns.rcode.NXDOMAIN: NXDOMAIN,
    dns.rcode.SERVFAIL: SERVFAIL,
    dns.rcode.REFUSED: REFUSED,
}

# judge(instance, qname, addresses, sent_at, received_at) → False for a wrong
# answer (one that contradicts what is known to be stored).
Judge = Callable[[str, str, list[str], float, float], bool]


@dataclass
class Outcome:
    instance: str
    qname: str
    kind: str
    addresses: list[str]
    sent_at: float
    received_at: float


class DnsLoad:
    """A steady UDP query load on several DNS instances, at `rate` queries per
    second on each, round-robin over `qnames`; one thread per instance with
    many queries in flight (so a slow instance does not slow the rate).

    Counts outcomes per instance (`counts`), keeps the failures with their
    times (`failures`) so a test can look at a window, and stops by itself
    after `max_seconds` whatever happens."""

    def __init__(
        self,
        instances: Mapping[str, int],
        qnames: Sequence[str],
        rate: float = 50.0,
        timeout: float = 1.0,
        judge: Judge | None = None,
        max_seconds: float = 900.0,
    ) -> None:
        assert qnames and rate > 0
        self.instances = dict(instances)
        self.qnames = list(qnames)
        self.rate = min(float(rate), 20_000.0)
        self.timeout = timeout
        self.judge = judge
        self.max_seconds = max_seconds
        self.counts: dict[str, Counter[str]] = {n: Counter() for n in self.instances}
        self.failures: list[Outcome] = []  # everything but ANSWER/NODATA
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._wire = [
            dns.message.make_query(q, dns.rdatatype.A).to_wire() for q in self.qnames
        ]

    def start(self) -> DnsLoad:
        for name, port in self.instances.items():
            thread = threading.Thread(
                target=self._run, args=(name, port), name=f"load-{name}", daemon=True
            )
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self) -> dict[str, Counter[str]]:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=self.timeout + 5)
        return self.counts

    def __enter__(self) -> DnsLoad:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def total(self, kind: str | None = None) -> int:
        with self._lock:
            if kind is None:
                return sum(sum(c.values()) for c in self.counts.values())
            return sum(c[kind] for c in self.counts.values())

    def failures_between(
        self, start: float, end: float, instance: str | None = None
    ) -> list[Outcome]:
        with self._lock:
            return [
                f
                for f in self.failures
                if start <= f.sent_at <= end
                and (instance is None or f.instance == instance)
            ]

    def _record(self, outcome: Outcome) -> None:
        with self._lock:
            self.counts[outcome.instance][outcome.kind] += 1
            if outcome.kind not in (ANSWER, NODATA) and len(self.failures) < 100_000:
                self.failures.append(outcome)

    def _run(self, instance: str, port: int) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        sock.connect((HOST, port))
        sock.setblocking(False)
        in_flight: dict[int, tuple[int, float]] = {}  # id → (qname index, sent_at)
        period = 1.0 / self.rate
        started = time.monotonic()
        next_send = started
        next_id, turn = 1, 0
        try:
            while not self._stop.is_set():
                now = time.monotonic()
                if now - started > self.max_seconds:
                    break
                burst = 0
                while next_send <= now and burst < 64:
                    qid = next_id
                    next_id = next_id % 65535 + 1
                    if qid not in in_flight:
                        index = turn % len(self._wire)
                        turn += 1
                        wire = qid.to_bytes(2, "big") + self._wire[index][2:]
                        with contextlib.suppress(OSError):
                            sock.send(wire)
                        in_flight[qid] = (index, time.monotonic())
                    next_send += period
                    burst += 1
                if next_send < now - 1.0:  # far behind: do not try to catch up
                    next_send = now
                wait = max(0.0, min(next_send - time.monotonic(), 0.05))
                readable, _, _ = select.select([sock], [], [], wait)
                if readable:
                    self._receive(instance, sock, in_flight)
                self._expire(instance, in_flight)
            # the queries still in flight get their full timeout
            end = time.monotonic() + self.timeout
            while in_flight and time.monotonic() < end:
                readable, _, _ = select.select([sock], [], [], 0.05)
                if readable:
                    self._receive(instance, sock, in_flight)
            self._expire(instance, in_flight, everything=True)
        finally:
            sock.close()

    def _receive(
        self,
        instance: str,
        sock: socket.socket,
        in_flight: dict[int, tuple[int, float]],
    ) -> None:
        for _ in range(256):
            try:
                raw = sock.recv(4096)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                # ICMP port unreachable: the instance is down; queries time out
                return
            received = time.monotonic()
            if len(raw) < 2:
                continue
            qid = int.from_bytes(raw[:2], "big")
            sent = in_flight.pop(qid, None)
            if sent is None:
                continue  # late answer to a query already counted as timed out
            index, sent_at = sent
            qname = self.qnames[index]
            try:
                reply = dns.message.from_wire(raw)
            except dns.exception.DNSException:
                self._record(Outcome(instance, qname, MALFORMED, [], sent_at, received))
                continue
            addresses = sorted(
                rd.to_text()
                for rrset in reply.answer
                if rrset.rdtype == dns.rdatatype.A
                for rd in rrset
            )
            kind = RCODES.get(reply.rcode(), OTHER)
            if reply.rcode() == dns.rcode.NOERROR:
                kind = ANSWER if addresses else NODATA
            if (
                kind in (ANSWER, NODATA, NXDOMAIN)
                and self.judge is not None
                and not self.judge(instance, qname, addresses, sent_at, received)
            ):
                kind = WRONG
            self._record(Outcome(instance, qname, kind, addresses, sent_at, received))

    def _expire(
        self,
        instance: str,
        in_flight: dict[int, tuple[int, float]],
        everything: bool = False,
    ) -> None:
        now = time.monotonic()
        late = [
            qid
            for qid, (_, sent_at) in in_flight.items()
            if everything or now - sent_at > self.timeout
        ]
        for qid in late:
            index, sent_at = in_flight.pop(qid)
            self._record(
                Outcome(instance, self.qnames[index], TIMEOUT, [], sent_at, now)
            )


@contextlib.contextmanager
def dns_load(
    instances: Mapping[str, int], qnames: Sequence[str], **kw: Any
) -> Iterator[DnsLoad]:
    load = DnsLoad(instances, qnames, **kw).start()
    try:
        yield load
    finally:
        load.stop()
