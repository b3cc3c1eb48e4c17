"""A tiny SIP responder on loopback: answers OPTIONS over UDP, TCP and TLS.

It stands in for a SIP server where the real one (Kamailio, see kamailio.py)
cannot easily do what a test needs: a TLS listener when Kamailio's TLS module is
missing, a 408, a provisional 100 (Trying) before the final answer, a late
answer, or no answer at all. Replies follow RFC 3261 §8.2.6: Via (all of them,
in order), From, Call-ID and CSeq are copied, To gets a tag on final responses,
and Content-Length is 0.

Also here, so that both fixtures and the tests share them: the self-signed
certificate for TLS listeners (made with the `openssl` command line), an OPTIONS
request as a SIP user agent sends it (RFC 3261 §11.1), and a SIP message parser.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import ssl
import subprocess
import tempfile
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from tests.conftest import require
from tests.support.ports import free_port

Transport = Literal["UDP", "TCP", "TLS"]

REASONS = {
    100: "Trying",
    180: "Ringing",
    200: "OK",
    400: "Bad Request",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    480: "Temporarily Unavailable",
    483: "Too Many Hops",
    486: "Busy Here",
    500: "Server Internal Error",
    501: "Not Implemented",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Server Time-out",
    600: "Busy Everywhere",
    603: "Decline",
}

# RFC 3261 §7.3.3 compact forms, mapped to the names used here.
_COMPACT = {
    "v": "Via",
    "f": "From",
    "t": "To",
    "i": "Call-ID",
    "m": "Contact",
    "l": "Content-Length",
    "c": "Content-Type",
    "k": "Supported",
    "s": "Subject",
    "e": "Content-Encoding",
}
_CANONICAL = {
    name.lower(): name
    for name in (
        "Via",
        "From",
        "To",
        "Call-ID",
        "CSeq",
        "Contact",
        "Content-Length",
        "Content-Type",
        "Max-Forwards",
        "Timestamp",
        "Allow",
        "Accept",
        "Supported",
        "Server",
        "User-Agent",
    )
}


def reason(status: int) -> str:
    return REASONS.get(status, "Unknown")


# ---------------------------------------------------------------- certificates


@dataclass(frozen=True)
class SelfSignedCert:
    """A certificate for CN=localhost, IP 127.0.0.1, and its unencrypted key."""

    cert: Path
    key: Path

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, self.key)
        return context

    def client_context(self) -> ssl.SSLContext:
        """A client context that trusts this certificate (and checks it)."""
        return ssl.create_default_context(cafile=str(self.cert))


def make_self_signed_cert(directory: Path, name: str = "sip") -> SelfSignedCert:
    """A P-256 certificate valid for two days, made with the openssl command line."""
    openssl = shutil.which("openssl")
    if openssl is None:
        require("openssl is not installed (Debian openssl)")
        raise AssertionError("unreachable")  # pragma: no cover - require() raises
    cert, key = directory / f"{name}-cert.pem", directory / f"{name}-key.pem"
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
        timeout=30,
    )
    return SelfSignedCert(cert, key)


# ---------------------------------------------------------------- messages


@dataclass
class SipMessage:
    """A parsed SIP request or response: start line, headers in order, body."""

    start_line: str
    headers: list[tuple[str, str]]
    body: bytes = b""

    @property
    def is_request(self) -> bool:
        return not self.start_line.startswith("SIP/2.0 ")

    @property
    def method(self) -> str:
        assert self.is_request, self.start_line
        return self.start_line.split(" ", 1)[0]

    @property
    def status(self) -> int:
        assert not self.is_request, self.start_line
        return int(self.start_line.split(" ", 2)[1])

    @property
    def reason(self) -> str:
        parts = self.start_line.split(" ", 2)
        return parts[2] if len(parts) > 2 else ""

    def all(self, name: str) -> list[str]:
        wanted = _canonical(name)
        return [value for header, value in self.headers if header == wanted]

    def get(self, name: str) -> str | None:
        values = self.all(name)
        return values[0] if values else None


def _canonical(name: str) -> str:
    lowered = name.strip().lower()
    if lowered in _COMPACT:
        return _COMPACT[lowered]
    return _CANONICAL.get(lowered, name.strip())


def parse_head(head: bytes) -> SipMessage:
    """The start line and headers (up to, not including, the blank line)."""
    lines = head.decode("utf-8", errors="replace").split("\r\n")
    start, headers = lines[0], []
    for line in lines[1:]:
        if not line:
            continue
        if line[0] in " \t" and headers:  # folded continuation of the last header
            name, value = headers[-1]
            headers[-1] = (name, f"{value} {line.strip()}")
            continue
        name, _, value = line.partition(":")
        headers.append((_canonical(name), value.strip()))
    return SipMessage(start, headers)


def parse_message(data: bytes) -> SipMessage:
    """One whole SIP message, as a UDP datagram carries it."""
    head, _, body = data.lstrip(b"\r\n").partition(b"\r\n\r\n")
    message = parse_head(head)
    length = message.get("Content-Length")
    message.body = body[: int(length)] if length is not None else body
    return message


def options_request(
    transport: Transport,
    target: tuple[str, int],
    local: tuple[str, int],
    *,
    branch: str | None = None,
    call_id: str | None = None,
    from_tag: str | None = None,
    cseq: int = 1,
) -> bytes:
    """An OPTIONS request as RFC 3261 §11.1 (and §8.1.1) has a UAC send it.

    `local` is the address the request is sent from (it goes into Via and
    Contact); Via also asks for `rport` (RFC 3581).
    """
    host, port = target
    local_host, local_port = local
    branch = branch or f"z9hG4bK{uuid.uuid4().hex}"
    assert branch.startswith("z9hG4bK"), "RFC 3261 §8.1.1.7 magic cookie"
    call_id = call_id or f"{uuid.uuid4().hex}@{local_host}"
    from_tag = from_tag or uuid.uuid4().hex[:16]
    uri_params = "" if transport == "UDP" else f";transport={transport.lower()}"
    lines = [
        f"OPTIONS sip:{host}:{port}{uri_params} SIP/2.0",
        f"Via: SIP/2.0/{transport} {local_host}:{local_port};branch={branch};rport",
        "Max-Forwards: 70",
        f"From: <sip:tmdns-test@{local_host}>;tag={from_tag}",
        f"To: <sip:{host}:{port}>",
        f"Call-ID: {call_id}",
        f"CSeq: {cseq} OPTIONS",
        f"Contact: <sip:tmdns-test@{local_host}:{local_port}{uri_params}>",
        "Accept: application/sdp",
        "Content-Length: 0",
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def response_to(
    request: SipMessage,
    status: int,
    *,
    to_tag: str,
    extra: tuple[tuple[str, str], ...] = (),
) -> bytes:
    """A response to `request` built as RFC 3261 §8.2.6.2 requires."""
    lines = [f"SIP/2.0 {status} {reason(status)}"]
    lines += [f"Via: {via}" for via in request.all("Via")]
    lines.append(f"From: {request.get('From')}")
    to = request.get("To") or ""
    # A UAS adds a tag to To unless the request had one; a 100 (Trying) may omit it.
    if status != 100 and ";tag=" not in to.replace(" ", "").lower():
        to = f"{to};tag={to_tag}"
    lines.append(f"To: {to}")
    lines.append(f"Call-ID: {request.get('Call-ID')}")
    lines.append(f"CSeq: {request.get('CSeq')}")
    timestamp = request.get("Timestamp")
    if status == 100 and timestamp is not None:  # §8.2.6.1
        lines.append(f"Timestamp: {timestamp}")
    lines += [f"{name}: {value}" for name, value in extra]
    lines += ["Server: tmdns-test-responder", "Content-Length: 0"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


# ---------------------------------------------------------------- responder


@dataclass
class Received:
    transport: Transport
    peer: tuple[str, int]
    message: SipMessage


class _Datagrams(asyncio.DatagramProtocol):
    def __init__(self, responder: SipResponder) -> None:
        self.responder = responder
        self.transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.DatagramTransport, transport)

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        if not data.strip(b"\r\n"):
            return  # keep-alive
        transport = self.transport
        if transport is None or transport.is_closing():
            return

        async def send(reply: bytes) -> None:
            if not transport.is_closing():
                transport.sendto(reply, addr)

        self.responder._spawn(
            self.responder._answer("UDP", addr, parse_message(data), send)
        )


@dataclass
class SipResponder:
    """Answers OPTIONS on 127.0.0.1 over UDP and TCP (one port) and TLS.

    Change `status` (None: stay silent), `trying` (send 100 first) and
    `final_delay` (seconds before the final response) at any time: they apply
    to the next request. Other methods get 405, and ACK nothing.
    """

    status: int | None = 200
    trying: bool = False
    final_delay: float = 0.0
    tls: bool = True
    certificate: SelfSignedCert | None = None
    port: int = field(default_factory=free_port)
    tls_port: int = field(default_factory=free_port)
    requests: list[Received] = field(default_factory=list)

    _tmpdir: Path | None = None
    _udp: asyncio.DatagramTransport | None = None
    _servers: list[asyncio.Server] = field(default_factory=list)
    _writers: set[asyncio.StreamWriter] = field(default_factory=set)
    _tasks: set[asyncio.Task[Any]] = field(default_factory=set)

    @property
    def udp_port(self) -> int:
        return self.port

    @property
    def tcp_port(self) -> int:
        return self.port

    def options(self, transport: Transport) -> list[SipMessage]:
        return [
            r.message
            for r in self.requests
            if r.transport == transport
            and r.message.is_request
            and r.message.method == "OPTIONS"
        ]

    async def start(self) -> SipResponder:
        loop = asyncio.get_running_loop()
        self._udp, _ = await loop.create_datagram_endpoint(
            lambda: _Datagrams(self), local_addr=("127.0.0.1", self.port)
        )
        self._servers.append(
            await asyncio.start_server(
                self._stream("TCP"), "127.0.0.1", self.port, reuse_address=True
            )
        )
        if self.tls:
            if self.certificate is None:
                self._tmpdir = Path(tempfile.mkdtemp(prefix="tmdns-sip-"))
                self.certificate = make_self_signed_cert(self._tmpdir)
            self._servers.append(
                await asyncio.start_server(
                    self._stream("TLS"),
                    "127.0.0.1",
                    self.tls_port,
                    reuse_address=True,
                    ssl=self.certificate.server_context(),
                    ssl_handshake_timeout=5,
                )
            )
        return self

    async def stop(self) -> None:
        """Close every listener and connection; the ports can be used again."""
        for server in self._servers:
            server.close()
        for writer in list(self._writers):
            writer.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=5)
        for server in self._servers:
            await asyncio.wait_for(server.wait_closed(), timeout=5)
        self._servers.clear()
        if self._udp is not None:
            self._udp.close()
            self._udp = None
        # Let the closed transports finish on the loop before returning.
        await asyncio.sleep(0)

    def close(self) -> None:
        """Remove the certificate made for this responder (after stop())."""
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None
            self.certificate = None

    async def __aenter__(self) -> SipResponder:
        try:
            return await self.start()
        except BaseException:
            await self.stop()
            self.close()
            raise

    async def __aexit__(self, *exc: object) -> None:
        try:
            await self.stop()
        finally:
            self.close()

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _stream(
        self, transport: Transport
    ) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]:
        async def serve(
            reader: asyncio.StreamReader, writer: asyncio.StreamWriter
        ) -> None:
            peer = writer.get_extra_info("peername")
            self._writers.add(writer)
            task = asyncio.current_task()
            if task is not None:
                self._tasks.add(task)

            async def send(reply: bytes) -> None:
                if not writer.is_closing():
                    writer.write(reply)
                    await writer.drain()

            try:
                while True:
                    head = await reader.readuntil(b"\r\n\r\n")
                    head = head.lstrip(b"\r\n")
                    if not head.strip():
                        continue  # RFC 5626 CRLF keep-alive
                    message = parse_head(head[:-4])
                    length = int(message.get("Content-Length") or 0)
                    if length:
                        message.body = await reader.readexactly(length)
                    # Answer in order on a stream: one request at a time.
                    await self._answer(transport, peer, message, send)
            except (
                # stop() cancels a connection's task: it ends here, not cancelled,
                # since asyncio's streams log a cancelled handler as an error.
                asyncio.CancelledError,
                asyncio.IncompleteReadError,
                asyncio.LimitOverrunError,
                ConnectionError,
                ssl.SSLError,
            ):
                pass
            finally:
                self._writers.discard(writer)
                writer.close()
                with contextlib.suppress(ConnectionError, ssl.SSLError, TimeoutError):
                    await asyncio.wait_for(writer.wait_closed(), timeout=1)
                if task is not None:
                    self._tasks.discard(task)

        return serve

    async def _answer(
        self,
        transport: Transport,
        peer: tuple[str, int],
        message: SipMessage,
        send: Callable[[bytes], Awaitable[None]],
    ) -> None:
        self.requests.append(Received(transport, peer, message))
        if not message.is_request or message.method == "ACK":
            return
        to_tag = uuid.uuid4().hex[:16]
        if message.method != "OPTIONS":
            await send(
                response_to(message, 405, to_tag=to_tag, extra=(("Allow", "OPTIONS"),))
            )
            return
        status, trying, delay = self.status, self.trying, self.final_delay
        if trying:
            await send(response_to(message, 100, to_tag=to_tag))
        if status is None:
            return
        if delay > 0:
            await asyncio.sleep(delay)
        extra = (("Allow", "OPTIONS"), ("Accept", "application/sdp"))
        await send(
            response_to(
                message, status, to_tag=to_tag, extra=extra if status < 300 else ()
            )
        )
