"""The UDP listener: reads every waiting datagram when the socket is readable,
answers them all, then sends the replies, many per system call where it can.

Why not asyncio's datagram transport: it makes one `recvfrom` and one `sendto`
per query, and on a virtual machine those two system calls cost more than
answering a cached query. With the `_mmsg` extension (built with the package
on Linux) a batch of up to 64 datagrams is one `recvmmsg` and one `sendmmsg`;
without it the same loop uses one `recvfrom`/`sendto` per datagram, which is
still no worse than the transport. Which one runs is logged at start.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import Callable
from typing import Any, Protocol

from app.dns.ratelimit import RateLimiter

log = logging.getLogger(__name__)

Peer = tuple[str, int]
Answer = Callable[[bytes, Peer, bool], bytes | None]
Reply = tuple[bytes, Any]  # the reply and where it goes back to
BATCH = 64  # datagrams per system call; the extension's own cap
ROUNDS = 4  # batches read per wake-up before other tasks get a turn

try:
    from app.dns import _mmsg
except ImportError:  # pragma: no cover - exercised where the extension is absent
    _mmsg = None  # type: ignore[assignment]  # batching_available() says which


class DatagramIO(Protocol):
    """Moves datagrams for one non-blocking socket. `receive` returns
    (data, peer, return address) for each waiting datagram, at most `count`;
    `send` takes (reply, return address) pairs."""

    name: str

    def receive(self, count: int) -> list[tuple[bytes, Peer, Any]]: ...

    def send(self, replies: list[tuple[bytes, Any]]) -> None: ...


class BatchedIO:
    """recvmmsg/sendmmsg through the `_mmsg` extension."""

    name = "recvmmsg/sendmmsg (batched)"

    def __init__(self, sock: socket.socket) -> None:
        self._fd = sock.fileno()
        self._receive, self._send = _mmsg.receive, _mmsg.send

    def receive(self, count: int) -> list[tuple[bytes, Peer, Any]]:
        return self._receive(self._fd, count)

    def send(self, replies: list[tuple[bytes, Any]]) -> None:
        self._send(self._fd, replies)


class SocketIO:
    """One recvfrom/sendto per datagram: the portable path."""

    name = "recvfrom/sendto (one datagram per system call)"

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def receive(self, count: int) -> list[tuple[bytes, Peer, Any]]:
        batch: list[tuple[bytes, Peer, Any]] = []
        recvfrom = self._sock.recvfrom
        for _ in range(count):
            try:
                data, peer = recvfrom(65535)
            except (BlockingIOError, InterruptedError):
                break
            except OSError as exc:  # e.g. ICMP port unreachable from a gone client
                log.debug("udp receive error: %s", exc)
                continue
            batch.append((data, peer[:2], peer))
        return batch

    def send(self, replies: list[tuple[bytes, Any]]) -> None:
        sendto = self._sock.sendto
        for data, peer in replies:
            try:
                sendto(data, peer)
            except OSError as exc:  # a full buffer or a gone client: it retries
                log.debug("udp send error: %s", exc)


def batching_available() -> bool:
    """Whether the recvmmsg/sendmmsg extension was built and loads here."""
    return _mmsg is not None


def io_for(sock: socket.socket, batched: bool | None = None) -> DatagramIO:
    """The batched I/O where the extension is built, else the portable one;
    `batched` forces a choice (tests run both)."""
    use = batching_available() if batched is None else batched
    if use and not batching_available():
        raise RuntimeError("the _mmsg extension is not built")
    return BatchedIO(sock) if use else SocketIO(sock)


class UdpListener:
    """Answers every datagram on one bound UDP socket from the event loop;
    with a rate limiter, each reply passes it first (app.dns.ratelimit)."""

    def __init__(
        self,
        sock: socket.socket,
        answer: Answer,
        io: DatagramIO,
        limiter: RateLimiter | None = None,
    ) -> None:
        self._sock = sock
        self._answer = answer
        self._io = io
        self._limiter = limiter
        self._loop = asyncio.get_running_loop()
        sock.setblocking(False)
        self._loop.add_reader(sock.fileno(), self._readable)

    @property
    def sockname(self) -> Any:
        return self._sock.getsockname()

    @property
    def io_name(self) -> str:
        return self._io.name

    def _readable(self) -> None:
        receive = self._io.receive
        answered = self._answered if self._limiter is None else self._limited
        for _ in range(ROUNDS):
            try:
                batch = receive(BATCH)
            except OSError as exc:  # a pending socket error; the next read goes on
                log.debug("udp receive error: %s", exc)
                return
            if not batch:
                return
            replies = answered(batch)
            if replies:
                self._io.send(replies)
            if len(batch) < BATCH:
                return

    def _answered(self, batch: list[tuple[bytes, Peer, Any]]) -> list[Reply]:
        answer = self._answer
        replies = []
        for data, peer, back in batch:
            reply = answer(data, peer, True)
            if reply is not None:
                replies.append((reply, back))
        return replies

    def _limited(self, batch: list[tuple[bytes, Peer, Any]]) -> list[Reply]:
        """As _answered, through response rate limiting."""
        answer, limiter, now = self._answer, self._limiter, time.monotonic()
        assert limiter is not None
        admit, shed = limiter.admit, limiter.shed
        replies = []
        for data, peer, back in batch:
            if shed(peer[0], now):
                continue
            reply = answer(data, peer, True)
            if reply is not None:
                reply = admit(data, reply, peer[0], now)
                if reply is not None:
                    replies.append((reply, back))
        return replies

    def close(self) -> None:
        if self._sock.fileno() >= 0:
            self._loop.remove_reader(self._sock.fileno())
            self._sock.close()


def bind_udp(host: str, port: int, reuse_port: bool) -> socket.socket:
    """A UDP socket bound to (host, port), as asyncio's endpoint would bind it."""
    info = socket.getaddrinfo(host, port, type=socket.SOCK_DGRAM)[0]
    sock = socket.socket(info[0], socket.SOCK_DGRAM)
    try:
        if reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(info[4])
    except OSError:
        sock.close()
        raise
    return sock
