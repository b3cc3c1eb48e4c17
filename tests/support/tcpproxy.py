"""A loopback TCP proxy that a test can cut and restore, to take one client's
connection to a server away (e.g. only the prober's connection to PostgreSQL)
while everything else keeps its own.

It runs its own asyncio loop in a thread, so a synchronous test drives it with
plain calls: `cut()` aborts every live connection and closes the listening
socket, so new connections are refused at once (as when a firewall rejects);
`restore()` listens again on the same port.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from tests.support.ports import free_port

LOOPBACK = ("127.0.0.1", "::1", "localhost")
CHUNK = 65536


class TcpProxy:
    """Forwards 127.0.0.1:`port` to `target_host`:`target_port` (both loopback)."""

    def __init__(self, target_host: str, target_port: int, port: int = 0) -> None:
        if target_host not in LOOPBACK and not target_host.startswith("127."):
            raise ValueError(f"the proxy only forwards to loopback, not {target_host}")
        self.target = (target_host, target_port)
        self.port = port or free_port()
        self.accepted = 0  # connections accepted since start
        self.cuts = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="tcpproxy", daemon=True
        )
        self._server: asyncio.Server | None = None
        self._pipes: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    # ---- synchronous control, from the test's thread -------------------------

    def start(self) -> TcpProxy:
        self._thread.start()
        self._call(self._listen())
        return self

    def cut(self) -> None:
        """Abort every live connection and refuse new ones until `restore()`."""
        self._call(self._cut())

    def restore(self) -> None:
        """Accept and forward connections again, on the same port."""
        self._call(self._listen())

    @property
    def is_cut(self) -> bool:
        return self._server is None

    def live(self) -> int:
        """Connections forwarded right now (each counts its two sockets once)."""
        return self._call(self._count())

    def close(self) -> None:
        if not self._thread.is_alive():
            return
        with contextlib.suppress(Exception):
            self._call(self._cut())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._loop.close()

    def __enter__(self) -> TcpProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=10)

    # ---- the proxy, on its own loop ------------------------------------------

    async def _count(self) -> int:
        return len(self._writers) // 2

    async def _listen(self) -> None:
        if self._server is None:
            self._server = await asyncio.start_server(
                self._accept, "127.0.0.1", self.port, reuse_address=True
            )

    async def _cut(self) -> None:
        self.cuts += 1
        server, self._server = self._server, None
        if server is not None:
            server.close()
        for writer in list(self._writers):
            # abort(): no FIN handshake, the peer sees a reset (as when a link
            # or a middlebox drops the connection), not a polite close.
            writer.transport.abort()
        for task in list(self._pipes):
            task.cancel()
        if self._pipes:
            await asyncio.wait(list(self._pipes), timeout=2)
        if server is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(2):
                    await server.wait_closed()

    async def _accept(
        self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter
    ) -> None:
        if self._server is None:
            client_writer.transport.abort()
            return
        try:
            async with asyncio.timeout(5):
                upstream_reader, upstream_writer = await asyncio.open_connection(
                    *self.target
                )
        except (OSError, TimeoutError):
            client_writer.transport.abort()
            return
        self.accepted += 1
        self._writers |= {client_writer, upstream_writer}
        pipes = [
            asyncio.create_task(self._pipe(client_reader, upstream_writer)),
            asyncio.create_task(self._pipe(upstream_reader, client_writer)),
        ]
        self._pipes.update(pipes)
        try:
            await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in pipes:
                task.cancel()
            for writer in (client_writer, upstream_writer):
                writer.transport.abort()
                self._writers.discard(writer)
            self._pipes.difference_update(pipes)

    @staticmethod
    async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while chunk := await reader.read(CHUNK):
                writer.write(chunk)
                await writer.drain()


@contextlib.contextmanager
def tcp_proxy(target_host: str, target_port: int) -> Iterator[TcpProxy]:
    with TcpProxy(target_host, target_port) as proxy:
        yield proxy
