"""DNS over TCP (app.dns.streams) on loopback connections, for a client that
does not read its replies: the server stops reading its queries while the
replies pile up, sends every reply in order once it reads again, and drops
it after the idle timeout if it never does."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import AsyncIterator, Callable

from app.dns.streams import TcpLimits, TcpServer

SIZE = 32_000  # octets in each reply: a large SRV set, say, so buffers fill
BUFFER = 4096  # the kernel's socket buffers on both sides, kept small


class Answers:
    """A stand-in answer that records what it was asked and replies with
    SIZE octets starting with the query, so each reply shows its query."""

    def __init__(self) -> None:
        self.asked: list[bytes] = []

    def __call__(self, data: bytes, peer: tuple[str, int], udp: bool) -> bytes:
        assert not udp
        self.asked.append(data)
        return data + b"." * (SIZE - len(data))


def queries(numbers: range) -> bytes:
    """Pipelined queries q0000, q0001 … each with its two-octet length."""
    return b"".join(b"\x00\x05q%04d" % n for n in numbers)


def reply_to(n: int) -> bytes:
    return SIZE.to_bytes(2, "big") + b"q%04d" % n + b"." * (SIZE - 5)


@contextlib.asynccontextmanager
async def serving(
    answer: Answers, limits: TcpLimits
) -> AsyncIterator[tuple[TcpServer, int]]:
    """A TCP listener on 127.0.0.1 whose connections have small send
    buffers (accepted sockets inherit the listener's), so that replies pile
    up in the server rather than in the kernel."""
    server = TcpServer(answer, limits)
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, BUFFER)
    listening.bind(("127.0.0.1", 0))
    tcp = await asyncio.get_running_loop().create_server(
        server.protocol, sock=listening
    )
    try:
        yield server, listening.getsockname()[1]
    finally:
        tcp.close()
        await tcp.wait_closed()


def connected(port: int) -> socket.socket:
    client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, BUFFER)
    client.settimeout(10)
    client.connect(("127.0.0.1", port))
    return client


def read_all(client: socket.socket, size: int) -> bytes:
    """`size` octets, or fewer if the server closes or resets first."""
    received = bytearray()
    with contextlib.suppress(ConnectionResetError):
        while len(received) < size:
            data = client.recv(1 << 16)
            if not data:
                break
            received += data
    return bytes(received)


async def until(condition: Callable[[], bool], limit: float = 5.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, "not within the time limit"
        await asyncio.sleep(0.01)


async def test_a_client_not_reading_its_replies_is_not_read_until_it_does() -> None:
    """A pipelining client that does not read its replies would otherwise
    make the server hold ever more of them: once they pile up, its further
    queries are left unread. When it reads again it gets every reply, in
    order, and the queries it sent meanwhile are answered too."""
    answer = Answers()
    async with serving(answer, TcpLimits(idle_timeout=10.0)) as (server, port):
        client = connected(port)
        with client:
            await until(lambda: server.open == 1)
            client.sendall(queries(range(50)))
            await until(lambda: len(answer.asked) == 50)
            client.sendall(queries(range(50, 100)))
            await asyncio.sleep(0.3)
            assert len(answer.asked) == 50  # the second 50 wait in the kernel
            received = await asyncio.to_thread(read_all, client, 100 * (SIZE + 2))
            assert received == b"".join(reply_to(n) for n in range(100))
            assert answer.asked == [b"q%04d" % n for n in range(100)]
            assert server.open == 1  # still connected: it did read in the end


async def test_a_client_that_never_reads_its_replies_is_dropped() -> None:
    """A client that asks and never reads holds a connection slot and its
    replies' memory: it is dropped once `idle_timeout` has passed since its
    replies began to pile up, and its slot is free again."""
    answer = Answers()
    limits = TcpLimits(idle_timeout=0.5, first_message_timeout=0.5)
    async with serving(answer, limits) as (server, port):
        client = connected(port)
        with client:
            await until(lambda: server.open == 1)
            started = time.monotonic()
            client.sendall(queries(range(50)))
            await until(lambda: server.open == 0)
            assert 0.4 <= time.monotonic() - started <= 3
            received = await asyncio.to_thread(read_all, client, 50 * (SIZE + 2))
            assert len(received) < 50 * (SIZE + 2)  # the rest was never sent
