"""UDP and TCP transports for DNS. They move bytes to the handler and back.

UDP is app.dns.datagrams; TCP (RFC 7766, fair between clients) app.dns.streams.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from app.dns.datagrams import UdpListener, bind_udp, io_for
from app.dns.handler import Handler
from app.dns.ratelimit import RateLimiter
from app.dns.streams import TcpLimits, TcpServer

log = logging.getLogger(__name__)

BACKLOG = 1024  # connections the kernel queues: a burst is closed by us, not it


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
    retries = 19 if port == 0 else 0  # 20 attempts in all for port 0
    while True:
        try:
            listeners = await _bind_pair(
                host, port, handle, limits, reuse_port, limiter
            )
        except OSError:
            if not retries:
                raise
            retries -= 1
            continue  # the UDP port picked was taken for TCP: pick another
        log.info(
            "DNS listening on %s:%d (UDP and TCP); UDP I/O: %s",
            host,
            listeners.port,
            listeners.udp.io_name,
        )
        return listeners


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
        tcp = await asyncio.get_running_loop().create_server(
            server.protocol, host, bound, reuse_port=reuse_port, backlog=BACKLOG
        )
    except OSError:
        udp.close()
        raise
    return DnsListeners(udp, tcp, server)
