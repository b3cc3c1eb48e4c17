"""UDP and TCP transports for DNS. They move bytes to the handler and back.

TCP follows RFC 7766: two-octet length framing, many (pipelined) queries per
connection answered in order, an idle timeout, and a cap on connections so a
flood of idle clients cannot starve the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass

from app.dns.datagrams import UdpListener, bind_udp, io_for
from app.dns.handler import Handler

log = logging.getLogger(__name__)


@dataclass(slots=True)
class TcpLimits:
    idle_timeout: float = 10.0
    max_connections: int = 256


class TcpServer:
    def __init__(self, handle: Handler, limits: TcpLimits) -> None:
        self._handle = handle
        self._limits = limits
        self._open = 0

    async def serve_client(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        if self._open >= self._limits.max_connections:
            writer.close()  # RFC 7766 §6.2.2: shed load by closing, not by queueing
            return
        self._open += 1
        peer = writer.get_extra_info("peername") or ("0.0.0.0", 0)
        try:
            while True:
                async with asyncio.timeout(self._limits.idle_timeout):
                    size = int.from_bytes(await reader.readexactly(2), "big")
                    wire = await reader.readexactly(size)
                reply = self._handle(wire, peer, False)
                if reply is None:
                    continue
                writer.write(len(reply).to_bytes(2, "big") + reply)
                await writer.drain()
        except (TimeoutError, asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self._open -= 1
            writer.close()
            with contextlib.suppress(ConnectionError, TimeoutError):
                await writer.wait_closed()


@dataclass(slots=True)
class DnsListeners:
    udp: UdpListener
    tcp: asyncio.Server

    @property
    def port(self) -> int:
        return int(self.udp.sockname[1])

    async def close(self) -> None:
        self.udp.close()
        self.tcp.close()
        await self.tcp.wait_closed()


async def start_dns(
    host: str, port: int, handle: Handler, limits: TcpLimits, reuse_port: bool = False
) -> DnsListeners:
    """Bind UDP and TCP on the same port; port 0 picks one free for both.

    With `reuse_port` (SO_REUSEPORT), several worker processes share the port
    and the kernel spreads queries over them.
    """
    attempts = 20 if port == 0 else 1
    for attempt in range(1, attempts + 1):
        try:
            listeners = await _bind_pair(host, port, handle, limits, reuse_port)
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
    host: str, port: int, handle: Handler, limits: TcpLimits, reuse_port: bool
) -> DnsListeners:
    sock = bind_udp(host, port, reuse_port)
    udp = UdpListener(sock, handle, io_for(sock))
    bound = udp.sockname[1]
    try:
        server = TcpServer(handle, limits)
        tcp = await asyncio.start_server(
            server.serve_client, host, bound, reuse_port=reuse_port
        )
    except OSError:
        udp.close()
        raise
    return DnsListeners(udp, tcp)
