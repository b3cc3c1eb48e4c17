"""DNS over TCP (RFC 7766), fair between clients, as an asyncio Protocol.

Why a Protocol rather than streams: a pipelining client sends many queries
in one segment; reading them from the buffer in one callback and writing all
the replies with one `write` costs a fraction of a coroutine step and a drain
per message.

Fairness: one address holds at most `per_client` connections (more from it
are closed at once, so one client cannot take every slot). When all
`max_connections` are taken, the connection that has waited longest since it
last asked is closed to make room (RFC 7766 §6.2.3 lets a server close idle
connections) rather than refusing the newcomer. A connection must complete
its first query within `first_message_timeout` (or `idle_timeout` if shorter)
and each later one within `idle_timeout` of the one before: trickling bytes
does not extend it. A client that stops reading its replies is dropped
after `idle_timeout`.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

Answer = Callable[[bytes, tuple[str, int], bool], bytes | None]


@dataclass(slots=True)
class TcpLimits:
    idle_timeout: float = 10.0
    max_connections: int = 256
    per_client: int = 16  # connections one client address may hold
    first_message_timeout: float = 3.0  # a new connection must ask by then


class TcpServer:
    """The connections of one TCP listener, and the limits they share."""

    def __init__(self, handle: Answer, limits: TcpLimits) -> None:
        self.handle = handle
        self.limits = limits
        # Open connections, least recently active first.
        self.connections: OrderedDict[DnsConnection, None] = OrderedDict()
        self.per_client: Counter[str] = Counter()
        self.evicted = 0  # connections closed to make room for a new one
        self.refused = 0  # connections over their client's limit

    @property
    def open(self) -> int:
        return len(self.connections)

    def protocol(self) -> DnsConnection:
        return DnsConnection(self)

    def admit(self, connection: DnsConnection, host: str) -> bool:
        """Count a new connection in, making room if needed; False when its
        client already holds its share."""
        if self.per_client[host] >= self.limits.per_client:
            self.refused += 1
            return False
        while len(self.connections) >= self.limits.max_connections:
            idlest = next(iter(self.connections))
            self.release(idlest, idlest.host)
            self.evicted += 1
            idlest.abort()
        self.connections[connection] = None
        self.per_client[host] += 1
        return True

    def release(self, connection: DnsConnection, host: str) -> None:
        """Count a connection out (once, however often it is called)."""
        if self.connections.pop(connection, False) is not False:
            self.per_client[host] -= 1
            if not self.per_client[host]:
                del self.per_client[host]


class DnsConnection(asyncio.Protocol):
    """One TCP client: two-octet length framing, replies in order."""

    # Set by connection_made, which the event loop calls before any other
    # method; the server aborts only connections it admitted there.
    _transport: asyncio.Transport

    def __init__(self, server: TcpServer) -> None:
        self._server = server
        self._buffer = bytearray()
        self._peer: tuple[str, int] = ("0.0.0.0", 0)
        self._admitted = False
        self._deadline = 0.0  # the next whole message must be in by then
        self._timer: asyncio.TimerHandle | None = None
        self._paused = False  # the client is not reading its replies

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)
        peer = transport.get_extra_info("peername") or ("0.0.0.0", 0)
        self._peer = (str(peer[0]), int(peer[1]))
        if not self._server.admit(self, self._peer[0]):
            self._transport.abort()
            return
        self._admitted = True
        limits = self._server.limits
        wait = min(limits.first_message_timeout, limits.idle_timeout)
        self._deadline = time.monotonic() + wait
        self._timer = asyncio.get_running_loop().call_later(wait, self._check_time)

    def data_received(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        replies = []
        handle, peer = self._server.handle, self._peer
        at, size = 0, len(buffer)
        while size - at >= 2:
            end = at + 2 + (buffer[at] << 8 | buffer[at + 1])
            if end > size:
                break
            reply = handle(bytes(buffer[at + 2 : end]), peer, False)
            if reply is not None:
                replies.append(len(reply).to_bytes(2, "big"))
                replies.append(reply)
            at = end
        if at:
            del buffer[:at]
            self._asked()
        if replies:
            self._transport.write(b"".join(replies))

    def _asked(self) -> None:
        """A whole message arrived: the connection is the most recently
        active, and the next one has `idle_timeout` from now."""
        self._deadline = time.monotonic() + self._server.limits.idle_timeout
        connections = self._server.connections
        # A guard that never fails today: an evicted connection is aborted at
        # once, and an aborted transport delivers no more data.
        if self in connections:  # pragma: no branch - see above
            connections.move_to_end(self)

    def _check_time(self) -> None:
        """Close when the deadline passed; otherwise look again at it (one
        timer per connection, not one per message)."""
        left = self._deadline - time.monotonic()
        if left <= 0:
            self.abort()
            return
        self._timer = asyncio.get_running_loop().call_later(left, self._check_time)

    def pause_writing(self) -> None:
        """The client's replies pile up: stop reading its queries, and drop
        it if it has not read them by the deadline."""
        self._paused = True
        self._transport.pause_reading()
        self._deadline = time.monotonic() + self._server.limits.idle_timeout

    def resume_writing(self) -> None:
        self._paused = False
        # A guard that never fails today: reading pauses with writing, so the
        # EOF after which a transport closes is read only once writing has
        # resumed, and an aborted transport never resumes writing.
        if not self._transport.is_closing():  # pragma: no branch - see above
            self._transport.resume_reading()

    @property
    def host(self) -> str:
        return self._peer[0]

    def eof_received(self) -> bool:
        return False  # every whole query has been answered: close after them

    def abort(self) -> None:
        self._transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self._admitted:
            self._server.release(self, self._peer[0])
            self._admitted = False
