"""UDP and TCP transports for DNS. They move bytes to the handler and back.

TCP follows RFC 7766: two-octet length framing, many (pipelined) queries per
connection answered in order, an idle timeout, and a cap on connections so a
flood of idle clients cannot starve the rest.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter, OrderedDict
from dataclasses import dataclass

from app.dns.datagrams import UdpListener, bind_udp, io_for
from app.dns.handler import Handler
from app.dns.ratelimit import RateLimiter

log = logging.getLogger(__name__)

BACKLOG = 1024  # connections the kernel queues: a burst is closed by us, not it


@dataclass(slots=True)
class TcpLimits:
    idle_timeout: float = 10.0
    max_connections: int = 256
    per_client: int = 16  # connections one client address may hold
    first_message_timeout: float = 3.0  # a new connection must ask by then


class TcpServer:
    """DNS over TCP, fair between clients.

    One address holds at most `per_client` connections: more from it are
    closed at once, so one client cannot take every slot. When all
    `max_connections` are taken, the connection that has waited longest
    since it last asked is closed to make room for the new one (RFC 7766
    §6.2.3 lets a server close idle connections), rather than refusing the
    newcomer. A connection must send its first query within
    `first_message_timeout` (or `idle_timeout` if shorter) and each later one
    within `idle_timeout`.
    """

    def __init__(self, handle: Handler, limits: TcpLimits) -> None:
        self._handle = handle
        self._limits = limits
        # Open connections, least recently active first.
        self._open: OrderedDict[asyncio.StreamWriter, None] = OrderedDict()
        self._per_client: Counter[str] = Counter()
        self.evicted = 0  # connections closed to make room for a new one
        self.refused = 0  # connections over their client's limit

    @property
    def open(self) -> int:
        return len(self._open)

    async def serve_client(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        peer = writer.get_extra_info("peername") or ("0.0.0.0", 0)
        host = peer[0]
        if self._per_client[host] >= self._limits.per_client:
            self.refused += 1
            writer.transport.abort()
            return
        while len(self._open) >= self._limits.max_connections:
            idlest = next(iter(self._open))
            del self._open[idlest]  # its own task sees the close and cleans up
            self.evicted += 1
            idlest.transport.abort()
        self._open[writer] = None
        self._per_client[host] += 1
        try:
            await self._serve(reader, writer, peer)
        except (TimeoutError, asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self._open.pop(writer, None)
            self._per_client[host] -= 1
            if not self._per_client[host]:
                del self._per_client[host]
            await _closed(writer)

    async def _serve(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        peer: tuple[str, int],
    ) -> None:
        limits = self._limits
        wait = min(limits.first_message_timeout, limits.idle_timeout)
        while True:
            async with asyncio.timeout(wait):  # the whole message, not each byte
                size = int.from_bytes(await reader.readexactly(2), "big")
                wire = await reader.readexactly(size)
            wait = self._limits.idle_timeout
            if writer in self._open:
                self._open.move_to_end(writer)  # the most recently active now
            reply = self._handle(wire, peer, False)
            if reply is None:
                continue
            writer.write(len(reply).to_bytes(2, "big") + reply)
            async with asyncio.timeout(self._limits.idle_timeout):
                await writer.drain()  # a client that never reads is dropped


async def _closed(writer: asyncio.StreamWriter) -> None:
    """Close after the last reply is flushed, but drop a client that does not
    read it within a second or two."""
    writer.close()
    try:
        async with asyncio.timeout(2):
            await writer.wait_closed()
    except (TimeoutError, ConnectionError):
        writer.transport.abort()


@dataclass(slots=True)
class DnsListeners:
    udp: UdpListener
    tcp: asyncio.Server
    tcp_clients: TcpServer

    @property
    def port(self) -> int:
        return int(self.udp.sockname[1])

    async def close(self) -> None:
        self.udp.close()
        self.tcp.close()
        await self.tcp.wait_closed()


async def start_dns(
    host: str,
    port: int,
    handle: Handler,
    limits: TcpLimits,
    reuse_port: bool = False,
    limiter: RateLimiter | None = None,
) -> DnsListeners:
    """Bind UDP and TCP on the same port; port 0 picks one free for both.

    With `reuse_port` (SO_REUSEPORT), several worker processes share the port
    and the kernel spreads queries over them.
    """
    attempts = 20 if port == 0 else 1
    for attempt in range(1, attempts + 1):
        try:
            listeners = await _bind_pair(
                host, port, handle, limits, reuse_port, limiter
            )
        except OSError:
            if attempt == attempts:
                raise
            continue  # the UDP port picked was taken for TCP: pick another
        log.info(
            "DNS listening on %s:%d (UDP and TCP); UDP I/O: %s",
            host,
            listeners.port,
            listeners.udp.io_name,
        )
        return listeners
    raise AssertionError("unreachable")


async def _bind_pair(
    host: str,
    port: int,
    handle: Handler,
    limits: TcpLimits,
    reuse_port: bool,
    limiter: RateLimiter | None,
) -> DnsListeners:
    sock = bind_udp(host, port, reuse_port)
    udp = UdpListener(sock, handle, io_for(sock), limiter)
    bound = udp.sockname[1]
    try:
        server = TcpServer(handle, limits)
        tcp = await asyncio.start_server(
            server.serve_client, host, bound, reuse_port=reuse_port, backlog=BACKLOG
        )
    except OSError:
        udp.close()
        raise
    return DnsListeners(udp, tcp, server)
