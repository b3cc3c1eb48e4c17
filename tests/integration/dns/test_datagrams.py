"""The UDP listener on both I/O paths: batched (recvmmsg/sendmmsg through the
_mmsg extension) and portable (recvfrom/sendto). Each reply must reach the
client that asked, whatever else is in the same batch."""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import socket
import time
from collections.abc import AsyncIterator

import pytest

from app.dns import datagrams
from app.dns.cookies import CookieSecrets
from app.dns.datagrams import UdpListener, batching_available, bind_udp, io_for
from app.dns.ratelimit import RateLimiter, RrlPolicy

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


def host_tagged(data: bytes, peer: tuple[str, int], udp: bool) -> bytes | None:
    """A stand-in answer naming the source host it was given."""
    return data + b"|" + peer[0].encode()


@pytest.mark.parametrize("batched", PATHS, ids=["batched", "portable"])
async def test_each_source_host_is_named_right_when_hosts_interleave(
    batched: bool,
) -> None:
    """Runs of one source and sources that alternate, in one batch: the host
    each answer is given is the one that sent it."""
    if batched and not batching_available():
        pytest.fail("the _mmsg extension is not built (make install builds it)")
    sock = bind_udp("127.0.0.1", 0, reuse_port=False)
    udp = UdpListener(sock, host_tagged, io_for(sock, batched=batched))
    hosts = ["127.0.0.1", "127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.2"]
    senders = []
    for host in hosts * 4:
        sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sender.bind((host, 0))
        sender.settimeout(2)
        senders.append(sender)
    try:
        for i, sender in enumerate(senders):
            sender.sendto(b"q%d" % i, udp.sockname)
        replies = await asyncio.gather(
            *(asyncio.to_thread(sender.recv, 100) for sender in senders)
        )
        for i, (sender, reply) in enumerate(zip(senders, replies, strict=True)):
            assert reply == b"q%d|%s" % (i, sender.getsockname()[0].encode())
    finally:
        for sender in senders:
            sender.close()
        udp.close()


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


IP_RECVERR = 11  # <linux/in.h>; the socket module has the name from Python 3.12


def huge(data: bytes, peer: tuple[str, int], udp: bool) -> bytes | None:
    """As `tagged`, but b"huge" gets a reply larger than any UDP datagram."""
    return b"x" * 70_000 if data == b"huge" else tagged(data, peer, udp)


@pytest.mark.parametrize("batched", PATHS, ids=["batched", "portable"])
async def test_a_pending_socket_error_is_logged_and_the_next_read_goes_on(
    batched: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """A reply to a client that has gone draws an ICMP port unreachable,
    which some systems report to the next read on the UDP socket (Linux
    does with IP_RECVERR, set here to make it happen). The listener logs
    the error and goes on answering everyone else, on both I/O paths."""
    caplog.set_level(logging.DEBUG, logger="app.dns.datagrams")
    sock = bind_udp("127.0.0.1", 0, reuse_port=False)
    sock.setsockopt(socket.IPPROTO_IP, IP_RECVERR, 1)
    udp = UdpListener(sock, tagged, io_for(sock, batched=batched))
    port = udp.sockname[1]
    gone, *rest = clients(4)
    try:
        gone.sendto(b"bye", ("127.0.0.1", port))
        gone.close()
        for _ in range(50):  # the reply, the ICMP error, the read that sees it
            await asyncio.sleep(0.02)
            if "udp receive error" in caplog.text:
                break
        assert "udp receive error: [Errno 111] Connection refused" in caplog.text
        for other in rest:
            other.sendto(b"hi", ("127.0.0.1", port))
        for other in rest:
            reply = await asyncio.to_thread(other.recv, 100)
            assert reply == b"hi|%d" % other.getsockname()[1]
    finally:
        for other in rest:
            other.close()
        udp.close()


@pytest.mark.parametrize("batched", PATHS, ids=["batched", "portable"])
async def test_a_reply_too_big_to_send_is_dropped_and_the_batch_goes_on(
    batched: bool,
) -> None:
    """A reply the kernel refuses (EMSGSIZE here: larger than a datagram)
    is skipped; the replies after it in the same batch still reach their
    clients, and the client it was for gets nothing and can retry."""
    sock = bind_udp("127.0.0.1", 0, reuse_port=False)
    udp = UdpListener(sock, huge, io_for(sock, batched=batched))
    port = udp.sockname[1]
    big, *rest = clients(4)
    try:
        big.sendto(b"huge", ("127.0.0.1", port))  # first in the batch
        for other in rest:
            other.sendto(b"hi", ("127.0.0.1", port))
        for other in rest:
            reply = await asyncio.to_thread(other.recv, 100)
            assert reply == b"hi|%d" % other.getsockname()[1]
        big.settimeout(0.3)
        with pytest.raises(TimeoutError):
            await asyncio.to_thread(big.recv, 100_000)
    finally:
        for other in (big, *rest):
            other.close()
        udp.close()


@pytest.mark.parametrize("batched", PATHS, ids=["batched", "portable"])
async def test_with_rrl_a_packet_left_unanswered_spends_no_token(
    batched: bool,
) -> None:
    """With response rate limiting at one reply a second, a packet the
    answer leaves unanswered is not counted: the query after it is the one
    that gets the reply, and the one after that is limited (dropped, as
    slip is 0)."""
    limiter = RateLimiter(
        RrlPolicy(rate=1, slip=0), CookieSecrets(bytes(16)), time.monotonic
    )
    sock = bind_udp("127.0.0.1", 0, reuse_port=False)
    udp = UdpListener(sock, tagged, io_for(sock, batched=batched), limiter)
    (client,) = clients(1)
    with client:
        for data in (b"quiet", b"one", b"two"):
            client.sendto(data, ("127.0.0.1", udp.sockname[1]))
        reply = await asyncio.to_thread(client.recv, 100)
        assert reply == b"one|%d" % client.getsockname()[1]
        client.settimeout(0.3)
        with pytest.raises(TimeoutError):
            await asyncio.to_thread(client.recv, 100)
    udp.close()
    assert limiter.counts.limited == 1


async def test_closing_frees_the_port_and_closing_again_does_nothing() -> None:
    """Shutdown may close a listener more than once (after a failed TCP
    bind, then on the way out): the second close is harmless, and the port
    is free for the next listener."""
    sock = bind_udp("127.0.0.1", 0, reuse_port=False)
    udp = UdpListener(sock, tagged, io_for(sock))
    port = udp.sockname[1]
    udp.close()
    udp.close()
    again = bind_udp("127.0.0.1", port, reuse_port=False)
    assert again.getsockname() == ("127.0.0.1", port)
    again.close()


@pytest.mark.parametrize("batched", PATHS, ids=["batched", "portable"])
async def test_with_reuse_port_two_listeners_share_one_port(batched: bool) -> None:
    """SO_REUSEPORT lets several server processes bind the same UDP port;
    the kernel hands each client's datagrams to one of them, which answers."""
    first = bind_udp("127.0.0.1", 0, reuse_port=True)
    port = first.getsockname()[1]
    second = bind_udp("127.0.0.1", port, reuse_port=True)
    listeners = [
        UdpListener(sock, tagged, io_for(sock, batched=batched))
        for sock in (first, second)
    ]
    assert {udp.sockname for udp in listeners} == {("127.0.0.1", port)}
    senders = clients(20)
    try:
        for sock in senders:
            sock.sendto(b"hi", ("127.0.0.1", port))
        for sock in senders:
            reply = await asyncio.to_thread(sock.recv, 100)
            assert reply == b"hi|%d" % sock.getsockname()[1]
    finally:
        for sock in senders:
            sock.close()
        for udp in listeners:
            udp.close()


def test_a_port_in_use_is_an_error_and_leaks_no_socket() -> None:
    """Binding a port another socket holds (without SO_REUSEPORT) raises
    EADDRINUSE for the caller to report, and the socket made for it is
    closed: a server retrying ports does not run out of descriptors."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as holder:
        holder.bind(("127.0.0.1", 0))
        port = holder.getsockname()[1]
        before = len(os.listdir("/proc/self/fd"))
        with pytest.raises(OSError) as raised:
            bind_udp("127.0.0.1", port, reuse_port=False)
        assert raised.value.errno == errno.EADDRINUSE
        assert len(os.listdir("/proc/self/fd")) == before


@pytest.mark.parametrize("batched", PATHS, ids=["batched", "portable"])
async def test_a_burst_longer_than_one_turn_is_answered_in_full(batched: bool) -> None:
    """One wake-up reads at most ROUNDS batches, so that other tasks get a
    turn under a flood; the datagrams past them are read on the next one.
    300 queries waiting at once (more than ROUNDS × BATCH) all get their
    own replies."""
    count = datagrams.ROUNDS * datagrams.BATCH + 44
    sock = bind_udp("127.0.0.1", 0, reuse_port=False)
    # Room for the whole burst in the kernel (the default holds about 256).
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 212_992)
    udp = UdpListener(sock, tagged, io_for(sock, batched=batched))
    senders = clients(count)
    try:
        for i, client in enumerate(senders):  # no await: all wait at once
            client.sendto(b"q%d" % i, ("127.0.0.1", udp.sockname[1]))
        replies = await asyncio.gather(
            *(asyncio.to_thread(client.recv, 100) for client in senders)
        )
        for i, (client, reply) in enumerate(zip(senders, replies, strict=True)):
            assert reply == b"q%d|%d" % (i, client.getsockname()[1])
    finally:
        for client in senders:
            client.close()
        udp.close()


@pytest.mark.parametrize("batched", PATHS, ids=["batched", "portable"])
async def test_a_batch_with_nothing_to_send_sends_nothing(batched: bool) -> None:
    """A wake-up whose datagrams all go unanswered makes no send at all,
    and the next datagram is answered as usual."""
    sock = bind_udp("127.0.0.1", 0, reuse_port=False)
    udp = UdpListener(sock, tagged, io_for(sock, batched=batched))
    port = udp.sockname[1]
    quiet, loud = clients(2)
    try:
        quiet.sendto(b"quiet", ("127.0.0.1", port))
        await asyncio.sleep(0.1)  # read, and left unanswered, on its own
        loud.sendto(b"hello", ("127.0.0.1", port))
        reply = await asyncio.to_thread(loud.recv, 100)
        assert reply == b"hello|%d" % loud.getsockname()[1]
        quiet.settimeout(0.2)
        with pytest.raises(TimeoutError):
            await asyncio.to_thread(quiet.recv, 100)
    finally:
        quiet.close()
        loud.close()
        udp.close()


@pytest.mark.parametrize("batched", PATHS, ids=["batched", "portable"])
async def test_a_flooding_network_is_shed_before_it_is_answered(batched: bool) -> None:
    """Under RRL, once a network has had more than SHED_AFTER times the rate
    of replies limited in a second, its queries are dropped before the
    answer is even worked out (one in SHED_SAMPLE still goes through), so a
    flood costs little CPU; it still gets no more replies than the rate."""
    limiter = RateLimiter(
        RrlPolicy(rate=1, slip=0), CookieSecrets(bytes(16)), time.monotonic
    )
    asked: list[bytes] = []

    def answer(data: bytes, peer: tuple[str, int], udp: bool) -> bytes | None:
        asked.append(data)
        return tagged(data, peer, udp)

    sock = bind_udp("127.0.0.1", 0, reuse_port=False)
    udp = UdpListener(sock, answer, io_for(sock, batched=batched), limiter)
    (client,) = clients(1)
    try:
        for i in range(40):  # no await: one batch, within one second
            client.sendto(b"q%d" % i, ("127.0.0.1", udp.sockname[1]))
        assert (
            await asyncio.to_thread(client.recv, 100)
            == b"q0|%d" % (client.getsockname()[1])
        )
        client.settimeout(0.3)
        with pytest.raises(TimeoutError):
            await asyncio.to_thread(client.recv, 100)
    finally:
        client.close()
        udp.close()
    assert limiter.counts.shed > 0
    assert len(asked) + limiter.counts.shed == 40  # each was answered or shed


@pytest.mark.parametrize("batched", PATHS, ids=["batched", "portable"])
async def test_the_listener_names_its_io_path(batched: bool) -> None:
    """The server logs which path it runs at start, so that an operator can
    tell whether the extension loaded."""
    sock = bind_udp("127.0.0.1", 0, reuse_port=False)
    udp = UdpListener(sock, tagged, io_for(sock, batched=batched))
    expected = "recvmmsg/sendmmsg" if batched else "recvfrom/sendto"
    assert udp.io_name.startswith(expected)
    udp.close()
