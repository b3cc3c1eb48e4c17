"""Binding the DNS listeners: UDP and TCP on one loopback port, a fresh pick
when the kernel's choice is taken for TCP, and a clear error for a fixed port
that cannot be had."""

from __future__ import annotations

import errno
import socket
from collections.abc import Iterator
from random import Random

import dns.message
import dns.rcode
import pytest

from app.dns import server
from app.dns.datagrams import bind_udp
from app.dns.handler import make_handler
from app.dns.server import start_dns
from app.dns.streams import TcpLimits
from app.domain.model import Config, Method
from app.domain.snapshot import compile_snapshot
from tests.builders import make_endpoint, make_profile, make_zone
from tests.support import dnsclient

HOST = "127.0.0.1"
SNAPSHOT = compile_snapshot(
    Config((make_zone(make_profile("app", Method.PRIORITY, make_endpoint(id=1))),)),
    {},
    1,
    0.0,
)
HANDLE = make_handler(lambda: SNAPSHOT, Random(1), lambda: 0.0, lambda _ip: None)
QUERY = dns.message.make_query("app.tm.example.", "A")


@pytest.fixture
def tcp_taken() -> Iterator[int]:
    """A loopback port with a TCP listener on it (and nothing on UDP)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        sock.listen()
        yield sock.getsockname()[1]


async def answers_on(port: int) -> tuple[int, int]:
    """The rcodes of one query over UDP and one over TCP to `port`."""
    udp = await dnsclient.udp_exchange(HOST, port, QUERY.to_wire())
    assert udp is not None
    tcp = await dnsclient.tcp_exchange(HOST, port, QUERY.to_wire())
    return dns.message.from_wire(udp).rcode(), dns.message.from_wire(tcp).rcode()


async def test_a_fixed_port_taken_for_tcp_is_an_error_that_frees_its_udp_half(
    tcp_taken: int,
) -> None:
    """An operator who names a port gets it or an error (never another port),
    and the UDP socket bound before TCP failed is closed, not left holding the
    port."""
    with pytest.raises(OSError) as raised:
        await start_dns(HOST, tcp_taken, HANDLE, TcpLimits())
    assert raised.value.errno == errno.EADDRINUSE
    bind_udp(HOST, tcp_taken, reuse_port=False).close()  # the UDP port is free


async def test_port_zero_picks_again_when_the_udp_pick_is_taken_for_tcp(
    tcp_taken: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With port 0 the kernel picks a free UDP port, which TCP may not have:
    the pair is bound again on another pick, and both transports answer on
    the port reported. The kernel's first pick is made to be the taken port,
    since its own picks collide only now and then."""
    picks = iter([tcp_taken])

    def first_pick_taken(host: str, port: int, reuse_port: bool) -> socket.socket:
        return bind_udp(host, next(picks, port), reuse_port)

    monkeypatch.setattr(server, "bind_udp", first_pick_taken)
    listeners = await start_dns(HOST, 0, HANDLE, TcpLimits())
    try:
        assert listeners.port not in (0, tcp_taken)
        assert await answers_on(listeners.port) == (
            dns.rcode.NOERROR,
            dns.rcode.NOERROR,
        )
    finally:
        await listeners.close()
