"""Defences for port 53 on the open internet, against a running tmdns over real
sockets: response rate limiting on UDP, fair TCP between clients, and the EDNS
TCP keepalive option (`dig +keepalive`)."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import dns.edns
import dns.exception
import dns.flags
import dns.message
import dns.query
import dns.rcode
import pytest

from tests.conftest import require
from tests.support.sample import ZONE
from tests.support.tmdns import Tmdns, started_tmdns

RATE = 20
FLOODER, BYSTANDER = "127.0.0.2", "127.0.5.1"  # two different /24s


@contextlib.asynccontextmanager
async def served(tmp_path: Path, **dns_settings: Any) -> AsyncIterator[Tmdns]:
    settings = {"dns": {"listen": "127.0.0.1:0", **dns_settings}}
    async with started_tmdns(f"sqlite:///{tmp_path}/t.db", **settings) as tm:
        await tm.ok("POST", "/zones", ZONE)

        async def served_zone() -> bool:
            reply = await tm.query("tm.example.", "SOA")
            return reply.rcode() == dns.rcode.NOERROR

        await tm.wait_for(served_zone, limit=5)
        yield tm


def flood(port: int, source: str, count: int, name: str) -> tuple[int, int, float]:
    """Send `count` queries for `name` as fast as a socket allows, then collect
    replies until none come for 0.5 s: (full answers, TC=1 slips, seconds)."""
    query = dns.message.make_query(name, "SOA")
    wire = query.to_wire()
    full = slips = 0
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind((source, 0))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        started = time.monotonic()
        for _ in range(count):
            sock.sendto(wire, ("127.0.0.1", port))
        sent_for = time.monotonic() - started
        sock.settimeout(0.5)
        with contextlib.suppress(TimeoutError):
            for _ in range(count):
                reply = dns.message.from_wire(sock.recv(4096))
                if reply.flags & dns.flags.TC:
                    slips += 1
                elif reply.answer:
                    full += 1
    return full, slips, sent_for


def ask_from(port: int, source: str, name: str, count: int) -> int:
    """Full answers to `count` queries asked from `source`, 20 a second (a
    network asking within the rate)."""
    answered = 0
    for _ in range(count):
        time.sleep(1 / RATE)
        query = dns.message.make_query(name, "SOA")
        with contextlib.suppress(dns.exception.Timeout):
            reply = dns.query.udp(
                query, "127.0.0.1", port=port, timeout=1, source=source
            )
            if reply.answer and not reply.flags & dns.flags.TC:
                answered += 1
    return answered


async def test_rrl_limits_a_flooding_network_and_spares_the_others(
    tmp_path: Path,
) -> None:
    async with served(tmp_path, rrl={"rate": RATE, "slip": 2}) as tm:
        port = tm.run.dns_port
        flooded, bystander = await asyncio.gather(
            asyncio.to_thread(flood, port, FLOODER, 600, "tm.example."),
            asyncio.to_thread(ask_from, port, BYSTANDER, "tm.example.", 15),
        )
    full, slips, seconds = flooded
    # The bucket holds one second's worth and refills at the rate.
    assert full <= RATE * (1 + seconds + 0.5), flooded
    assert full >= RATE // 2, flooded
    # Every 2nd limited reply goes out as TC=1; past 4 × the rate limited in a
    # second the flood is shed before answering, but one query in 16 still
    # goes through the buckets and can slip.
    assert 40 <= slips <= 300, flooded
    assert bystander == 15  # another /24 gets every answer


async def test_rrl_metrics_count_what_was_limited(tmp_path: Path) -> None:
    async with served(tmp_path, rrl={"rate": RATE, "slip": 2}) as tm:
        await asyncio.to_thread(flood, tm.run.dns_port, FLOODER, 200, "tm.example.")
        async with tm.http.get(tm.base.removesuffix("/api/v1") + "/metrics") as got:
            text = await got.text()
    limited = _sample(text, 'tmdns_rrl_responses_total{action="limited"}')
    slipped = _sample(text, 'tmdns_rrl_responses_total{action="slipped"}')
    shed = _sample(text, 'tmdns_rrl_responses_total{action="shed"}')
    assert limited >= 4 * RATE and 0.4 * limited <= slipped <= 0.6 * limited
    assert limited + shed >= 200 - 2 * RATE  # all but the burst and its refill


async def test_without_rrl_every_query_is_answered(tmp_path: Path) -> None:
    """Off by default: nothing is limited and no RRL metric appears."""
    async with served(tmp_path) as tm:
        full, slips, _ = await asyncio.to_thread(
            flood, tm.run.dns_port, FLOODER, 200, "tm.example."
        )
        async with tm.http.get(tm.base.removesuffix("/api/v1") + "/metrics") as got:
            text = await got.text()
    assert (full, slips) == (200, 0)
    assert "tmdns_rrl_responses" not in text


def _sample(metrics: str, series: str) -> float:
    for line in metrics.splitlines():
        if line.startswith(series + " "):
            return float(line.split()[-1])
    raise AssertionError(f"{series} not in /metrics")


def _idle_connections(port: int, source: str, count: int) -> list[socket.socket]:
    """`count` TCP connections from `source` that never ask, each reopened
    once if the server closes it (as an attacker would)."""
    held = []
    for _ in range(count):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind((source, 0))
        sock.settimeout(2)
        try:
            sock.connect(("127.0.0.1", port))
            sock.send(b"\x00")  # one byte of a length prefix, then nothing
        except OSError:
            sock.close()
            continue
        held.append(sock)
    return held


def _tcp_answers(port: int, source: str, count: int) -> int:
    answered = 0
    for _ in range(count):
        query = dns.message.make_query("tm.example.", "SOA")
        with contextlib.suppress(OSError, EOFError, dns.exception.DNSException):
            reply = dns.query.tcp(
                query, "127.0.0.1", port=port, timeout=2, source=source
            )
            answered += bool(reply.answer)
    return answered


async def test_one_client_holding_600_connections_starves_nobody(
    tmp_path: Path,
) -> None:
    async with served(tmp_path) as tm:
        port = tm.run.dns_port
        held = await asyncio.to_thread(_idle_connections, port, "127.0.0.2", 600)
        try:
            answered = await asyncio.to_thread(_tcp_answers, port, "127.0.0.3", 200)
            listeners = tm.run.dns[0].tcp_clients
            assert listeners.open <= 16 + 1  # the flooder's share, and ours
            assert listeners.refused >= 600 - 16
        finally:
            for sock in held:
                sock.close()
    assert answered >= 198  # at least 99 %


async def test_a_connection_that_never_asks_is_closed_after_the_first_message_timeout(
    tmp_path: Path,
) -> None:
    async with served(
        tmp_path, tcp_first_message_timeout=0.5, tcp_idle_timeout=10
    ) as tm:
        reader, writer = await asyncio.open_connection("127.0.0.1", tm.run.dns_port)
        started = time.monotonic()
        writer.write(b"\x00")  # a length prefix begun, never finished
        assert await asyncio.wait_for(reader.read(), 5) == b""  # closed by server
        assert 0.4 <= time.monotonic() - started <= 3
        writer.close()


@pytest.mark.parametrize("transport", ["tcp", "udp"])
async def test_dig_keepalive_gets_the_idle_timeout_over_tcp_only(
    tmp_path: Path, transport: str
) -> None:
    if shutil.which("dig") is None:
        require("dig is not installed")
    async with served(tmp_path, tcp_idle_timeout=7.5) as tm:
        flag = "+tcp" if transport == "tcp" else "+notcp"
        port = str(tm.run.dns_port)
        asked = await asyncio.to_thread(
            subprocess.run,
            ["dig", "@127.0.0.1", "-p", port, flag, "+keepalive", "tm.example.", "SOA"],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        )
    assert "status: NOERROR" in asked.stdout, asked.stdout
    if transport == "tcp":
        assert "TCP KEEPALIVE: 7.5 secs" in asked.stdout, asked.stdout
    else:
        assert "KEEPALIVE" not in asked.stdout, asked.stdout


async def test_a_client_sent_keepalive_timeout_over_tcp_is_formerr(
    tmp_path: Path,
) -> None:
    """RFC 7828 §3.2.2: clients send the option empty; a value is FORMERR."""
    option = dns.edns.GenericOption(11, b"\x00\x64")
    async with served(tmp_path) as tm:
        query = dns.message.make_query("tm.example.", "SOA", options=[option])
        reply = await asyncio.to_thread(
            dns.query.tcp, query, "127.0.0.1", port=tm.run.dns_port, timeout=2
        )
        over_udp = await asyncio.to_thread(
            dns.query.udp, query, "127.0.0.1", port=tm.run.dns_port, timeout=2
        )
    assert reply.rcode() == dns.rcode.FORMERR
    assert over_udp.rcode() == dns.rcode.NOERROR  # ignored on UDP
