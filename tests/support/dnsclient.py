"""Raw DNS over loopback for conformance tests: bytes out, bytes back.

dnspython builds and parses well-formed messages; these helpers build the
malformed ones it refuses to produce, move bytes over UDP and TCP without
interpreting them (so sizes and exact bytes can be checked), and run the
command-line clients. Every helper is bounded in time.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

LOOPBACK = ("127.0.0.1", "::1")


def _family(host: str) -> socket.AddressFamily:
    assert host in LOOPBACK, f"{host} is not loopback"
    return socket.AF_INET6 if ":" in host else socket.AF_INET


# --- building messages by hand ------------------------------------------------


def header(
    qid: int = 0x1234,
    flags: int = 0,
    qd: int = 1,
    an: int = 0,
    ns: int = 0,
    ar: int = 0,
) -> bytes:
    return b"".join(n.to_bytes(2, "big") for n in (qid, flags, qd, an, ns, ar))


def name(text: str) -> bytes:
    """A name in wire form, uncompressed, with each label's case kept."""
    labels = [label for label in text.rstrip(".").split(".") if label]
    return b"".join(bytes([len(lb)]) + lb.encode() for lb in labels) + b"\x00"


def question(qname: str = "app.tm.example.", qtype: int = 1, qclass: int = 1) -> bytes:
    return name(qname) + qtype.to_bytes(2, "big") + qclass.to_bytes(2, "big")


def option(code: int, data: bytes) -> bytes:
    return code.to_bytes(2, "big") + len(data).to_bytes(2, "big") + data


def ecs(family: int, source: int, scope: int, address: bytes) -> bytes:
    """An EDNS Client Subnet option (RFC 7871 §6), fields exactly as given."""
    return option(8, family.to_bytes(2, "big") + bytes([source, scope]) + address)


def opt(
    owner: bytes = b"\x00",
    payload: int = 1232,
    version: int = 0,
    options: bytes = b"",
) -> bytes:
    """An OPT pseudo-record (RFC 6891 §6.1.2)."""
    ttl = version << 16
    return (
        owner
        + (41).to_bytes(2, "big")
        + payload.to_bytes(2, "big")
        + ttl.to_bytes(4, "big")
        + len(options).to_bytes(2, "big")
        + options
    )


def a_record(
    owner: bytes = b"\xc0\x0c", address: bytes = bytes([127, 0, 0, 1])
) -> bytes:
    return owner + b"\x00\x01\x00\x01" + (60).to_bytes(4, "big") + b"\x00\x04" + address


def rcode_of(wire: bytes) -> int:
    """The 4-bit header rcode."""
    return wire[3] & 0x0F


def id_of(wire: bytes) -> int:
    return int.from_bytes(wire[0:2], "big")


def flags_of(wire: bytes) -> int:
    return int.from_bytes(wire[2:4], "big")


# --- UDP ----------------------------------------------------------------------


async def udp_exchange(
    host: str, port: int, wire: bytes, timeout: float = 2.0
) -> bytes | None:
    """Send one datagram; the reply, or None if none comes within `timeout`."""
    loop = asyncio.get_running_loop()
    with socket.socket(_family(host), socket.SOCK_DGRAM) as sock:
        sock.setblocking(False)
        sock.connect((host, port))
        await loop.sock_sendall(sock, wire)
        try:
            async with asyncio.timeout(timeout):
                return await loop.sock_recv(sock, 65535)
        except TimeoutError:
            return None


async def udp_batch(
    host: str,
    port: int,
    packets: Sequence[bytes],
    sentinel: bytes,
    chunk: int = 20,
    timeout: float = 2.0,
) -> tuple[list[bytes], int]:
    """Send the packets from one socket, `chunk` at a time, each chunk followed
    by `sentinel`; collect the replies that arrive until the sentinel's (matched
    by ID) or `timeout`. Chunks keep the server's socket buffer from overflowing:
    the server shares the test's event loop and reads only when the test waits.

    Returns (replies to the packets, how many sentinels were answered).
    """
    loop = asyncio.get_running_loop()
    replies: list[bytes] = []
    answered = 0
    with socket.socket(_family(host), socket.SOCK_DGRAM) as sock:
        sock.setblocking(False)
        sock.connect((host, port))
        for start in range(0, len(packets), chunk):
            for packet in [*packets[start : start + chunk], sentinel]:
                await loop.sock_sendall(sock, packet)
            try:
                async with asyncio.timeout(timeout):
                    while True:
                        reply = await loop.sock_recv(sock, 65535)
                        if reply[:2] == sentinel[:2] and len(reply) >= 12:
                            answered += 1
                            break
                        replies.append(reply)
            except TimeoutError:
                pass
    return replies, answered


# --- TCP ----------------------------------------------------------------------


@dataclass
class TcpClient:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter

    async def send(self, wire: bytes) -> None:
        """One message with its two-octet length (RFC 1035 §4.2.2)."""
        await self.send_raw(len(wire).to_bytes(2, "big") + wire)

    async def send_raw(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def receive(self, timeout: float = 2.0) -> bytes:
        """The next framed message; raises if the server closes or stays silent."""
        async with asyncio.timeout(timeout):
            size = int.from_bytes(await self.reader.readexactly(2), "big")
            return await self.reader.readexactly(size)

    async def exchange(self, wire: bytes, timeout: float = 2.0) -> bytes:
        await self.send(wire)
        return await self.receive(timeout)

    async def closed_by_server(self, timeout: float) -> bool:
        """True if the server closes the connection within `timeout` without
        sending anything; False if it stays open (or sends data)."""
        try:
            async with asyncio.timeout(timeout):
                data = await self.reader.read(1)
        except TimeoutError:
            return False
        except ConnectionError:
            return True
        return data == b""

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError, TimeoutError):
            async with asyncio.timeout(1.0):
                await self.writer.wait_closed()


@contextlib.asynccontextmanager
async def tcp_client(host: str, port: int) -> AsyncIterator[TcpClient]:
    _family(host)
    async with asyncio.timeout(2.0):
        reader, writer = await asyncio.open_connection(host, port)
    client = TcpClient(reader, writer)
    try:
        yield client
    finally:
        await client.close()


async def tcp_exchange(host: str, port: int, wire: bytes) -> bytes:
    async with tcp_client(host, port) as client:
        return await client.exchange(wire)


# --- command-line clients -----------------------------------------------------


async def run_tool(*argv: str, timeout: float = 10.0) -> tuple[int, str]:
    """Run dig or kdig without blocking the event loop the server runs on."""
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    try:
        async with asyncio.timeout(timeout):
            out, _ = await proc.communicate()
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    assert proc.returncode is not None
    return proc.returncode, out.decode(errors="replace")
