"""The UDP listener on both I/O paths: batched (recvmmsg/sendmmsg through the
_mmsg extension) and portable (recvfrom/sendto). Each reply must reach the
client that asked, whatever else is in the same batch."""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import AsyncIterator

import pytest

from app.dns import datagrams
from app.dns.datagrams import UdpListener, batching_available, bind_udp, io_for

PATHS = [True, False]


def test_the_extension_is_built_in_ci() -> None:
    """CI builds the package with a compiler: the batched path must be there."""
    if not os.environ.get("CI"):
        pytest.skip("outside CI the extension may be missing, by design")
    assert batching_available()


def tagged(data: bytes, peer: tuple[str, int], udp: bool) -> bytes | None:
    """A stand-in answer that shows whom it answered; b"quiet" gets no reply."""
    assert udp
    if data == b"quiet":
        return None
    return data + b"|" + str(peer[1]).encode()


@pytest.fixture(params=PATHS, ids=["batched", "portable"])
async def listener(request: pytest.FixtureRequest) -> AsyncIterator[UdpListener]:
    if request.param and not batching_available():
        pytest.fail("the _mmsg extension is not built (make install builds it)")
    sock = bind_udp("127.0.0.1", 0, reuse_port=False)
    udp = UdpListener(sock, tagged, io_for(sock, batched=request.param))
    yield udp
    udp.close()


def clients(count: int) -> list[socket.socket]:
    made = []
    for _ in range(count):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind(("127.0.0.1", 0))
        sock.settimeout(2)
        made.append(sock)
    return made


async def test_every_client_in_a_burst_gets_its_own_reply(
    listener: UdpListener,
) -> None:
    port = listener.sockname[1]
    senders = clients(150)  # more than two batches arrive before the loop runs
    for i, sock in enumerate(senders):
        sock.sendto(b"q%d" % i, ("127.0.0.1", port))
    replies = await asyncio.gather(
        *(asyncio.to_thread(sock.recv, 100) for sock in senders)
    )
    for i, (sock, reply) in enumerate(zip(senders, replies, strict=True)):
        assert reply == b"q%d|%d" % (i, sock.getsockname()[1])
        sock.close()


async def test_a_silent_answer_sends_nothing_and_stops_nothing(
    listener: UdpListener,
) -> None:
    port = listener.sockname[1]
    (quiet, loud) = clients(2)
    with quiet, loud:
        quiet.sendto(b"quiet", ("127.0.0.1", port))
        loud.sendto(b"hello", ("127.0.0.1", port))
        reply = await asyncio.to_thread(loud.recv, 100)
        assert reply == b"hello|%d" % loud.getsockname()[1]
        quiet.settimeout(0.3)
        with pytest.raises(TimeoutError):
            await asyncio.to_thread(quiet.recv, 100)


async def test_a_gone_client_does_not_cost_the_others(listener: UdpListener) -> None:
    """A reply to a closed port draws an ICMP error; the next batch still goes."""
    port = listener.sockname[1]
    gone, *rest = clients(5)
    gone.sendto(b"bye", ("127.0.0.1", port))
    gone.close()
    await asyncio.sleep(0.1)
    for sock in rest:
        sock.sendto(b"hi", ("127.0.0.1", port))
    for sock in rest:
        assert (
            await asyncio.to_thread(sock.recv, 100) == b"hi|%d" % sock.getsockname()[1]
        )
        sock.close()


@pytest.mark.parametrize("batched", PATHS, ids=["batched", "portable"])
async def test_ipv6_clients_are_answered(batched: bool) -> None:
    if batched and not batching_available():
        pytest.fail("the _mmsg extension is not built")
    sock = bind_udp("::1", 0, reuse_port=False)
    udp = UdpListener(sock, tagged, io_for(sock, batched=batched))
    client = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    client.settimeout(2)
    try:
        client.sendto(b"six", ("::1", udp.sockname[1]))
        reply = await asyncio.to_thread(client.recv, 100)
        assert reply == b"six|%d" % client.getsockname()[1]
    finally:
        client.close()
        udp.close()


def test_forcing_the_batched_path_without_the_extension_is_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(datagrams, "_mmsg", None)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        assert io_for(sock).name.startswith("recvfrom/sendto")
        with pytest.raises(RuntimeError, match="not built"):
            io_for(sock, batched=True)
