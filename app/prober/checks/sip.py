"""SIP OPTIONS monitor over UDP, TCP or TLS (RFC 3261 §11).

A fresh transaction per probe: a new Via branch (z9hG4bK…, with rport), From
tag and Call-ID. Over UDP the request is retransmitted on Timer A (T1 = 0.5 s,
doubling) until the timeout. A response counts only if its branch, Call-ID and
CSeq are ours; provisional (1xx) responses are skipped. A timeout, or a 408
(what a SIP stack generates when it times out), is never "up".
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from dataclasses import dataclass

from app.domain.health import Verdict
from app.domain.model import MonitorProtocol, SipSuccess
from app.prober.checks.kit import USER_AGENT, Probe, ProbeKit, accepted, parse_codes

T1 = 0.5
DEFAULT_CODES = "200-299"
REQUEST_TIMEOUT = 408
TRANSPORT = {
    MonitorProtocol.SIP_UDP: "UDP",
    MonitorProtocol.SIP_TCP: "TCP",
    MonitorProtocol.SIP_TLS: "TLS",
}
MAX_MESSAGE = 65535


@dataclass(frozen=True, slots=True)
class Transaction:
    branch: str
    call_id: str
    cseq: str = "1 OPTIONS"


@dataclass(frozen=True, slots=True)
class Response:
    code: int
    phrase: str
    branch: str | None
    call_id: str | None
    cseq: str | None


def options_request(
    probe: Probe, transport: str, local: tuple[str, int], tx: Transaction
) -> bytes:
    local_host = f"[{local[0]}]" if ":" in local[0] else local[0]
    target = f"[{probe.host}]" if ":" in probe.host else probe.host
    uri = f"sip:{target}:{probe.port}"
    if transport != "UDP":
        uri += f";transport={transport.lower()}"
    lines = [
        f"OPTIONS {uri} SIP/2.0",
        f"Via: SIP/2.0/{transport} {local_host}:{local[1]};branch={tx.branch};rport",
        "Max-Forwards: 70",
        f"From: <sip:tmdns@{local_host}>;tag={secrets.token_hex(6)}",
        f"To: <{uri}>",
        f"Call-ID: {tx.call_id}",
        f"CSeq: {tx.cseq}",
        f"Contact: <sip:tmdns@{local_host}:{local[1]}>",
        f"User-Agent: {USER_AGENT}",
        "Accept: application/sdp",
        "Content-Length: 0",
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def parse_response(data: bytes) -> Response | None:
    """The parts of a SIP response we match on; None for anything else."""
    head = data.split(b"\r\n\r\n", 1)[0].decode("utf-8", "replace")
    status, *header_lines = head.split("\r\n")
    parts = status.split(" ", 2)
    if len(parts) < 2 or parts[0] != "SIP/2.0" or not parts[1].isdigit():
        return None
    headers: dict[str, str] = {}
    for line in header_lines:
        name, sep, value = line.partition(":")
        if sep:
            key = {"v": "via", "i": "call-id"}.get(
                name.strip().lower(), name.strip().lower()
            )
            headers.setdefault(key, value.strip())  # the top Via is ours
    via = headers.get("via", "")
    branch = next(
        (p.split("=", 1)[1] for p in via.split(";") if p.strip().startswith("branch=")),
        None,
    )
    cseq = " ".join(headers.get("cseq", "").split()) or None
    return Response(
        int(parts[1]),
        parts[2] if len(parts) > 2 else "",
        branch,
        headers.get("call-id"),
        cseq,
    )


def _ours(response: Response, tx: Transaction) -> bool:
    return (
        response.branch == tx.branch
        and response.call_id == tx.call_id
        and response.cseq == tx.cseq
    )


async def check(probe: Probe, kit: ProbeKit) -> Verdict:
    monitor = probe.monitor
    tx = Transaction("z9hG4bK" + secrets.token_hex(8), secrets.token_hex(12) + "@tmdns")
    transport = TRANSPORT[monitor.protocol]
    started = time.perf_counter()
    try:
        async with asyncio.timeout(monitor.timeout):
            if transport == "UDP":
                response = await _over_udp(probe, kit, tx)
            else:
                response = await _over_stream(probe, kit, tx, transport)
    except TimeoutError:
        return Verdict(False, f"timeout after {monitor.timeout:g} s", outcome="timeout")
    except ConnectionRefusedError:
        return Verdict(False, "connection refused", outcome="refused")
    except (OSError, EOFError, asyncio.LimitOverrunError) as exc:
        return Verdict(False, f"SIP over {transport} failed: {exc}", outcome="error")
    latency = (time.perf_counter() - started) * 1e3
    reason = f"SIP {response.code} {response.phrase} in {latency:.0f} ms"
    if response.code == REQUEST_TIMEOUT:
        return Verdict(False, reason, latency, "status")
    if monitor.sip_success is SipSuccess.ANY_RESPONSE:
        return Verdict(True, reason, latency)
    ok = accepted(response.code, parse_codes(monitor.expected_status, DEFAULT_CODES))
    return Verdict(ok, reason, latency, "ok" if ok else "status")


class _Collector(asyncio.DatagramProtocol):
    def __init__(self, tx: Transaction) -> None:
        self.tx = tx
        self.final: asyncio.Future[Response] = (
            asyncio.get_running_loop().create_future()
        )

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        response = parse_response(data)
        if response is None or response.code < 200 or not _ours(response, self.tx):
            return  # provisional, not ours, or not SIP at all
        if not self.final.done():
            self.final.set_result(response)

    def error_received(self, exc: Exception) -> None:
        if not self.final.done():
            self.final.set_exception(exc)


async def _over_udp(probe: Probe, kit: ProbeKit, tx: Transaction) -> Response:
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.create_datagram_endpoint(
        lambda: _Collector(tx),
        remote_addr=(probe.address, probe.port),
        local_addr=kit.local_addr(probe.address),
    )
    try:
        local = transport.get_extra_info("sockname")[:2]
        request = options_request(probe, "UDP", local, tx)
        wait = T1
        while True:
            transport.sendto(request)
            with contextlib.suppress(TimeoutError):
                return await asyncio.wait_for(asyncio.shield(protocol.final), wait)
            wait *= 2  # RFC 3261 §17.1.1.2 Timer A
    finally:
        transport.close()


async def _over_stream(
    probe: Probe, kit: ProbeKit, tx: Transaction, transport: str
) -> Response:
    tls = kit.tls(probe.monitor.verify_tls) if transport == "TLS" else None
    reader, writer = await asyncio.open_connection(
        probe.address,
        probe.port,
        local_addr=kit.local_addr(probe.address),
        ssl=tls,
        server_hostname=probe.host if tls is not None else None,
    )
    try:
        local = writer.get_extra_info("sockname")[:2]
        writer.write(options_request(probe, transport, local, tx))
        await writer.drain()
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            if len(head) > MAX_MESSAGE:
                raise EOFError("response header too large")
            response = parse_response(head)
            length = _content_length(head)
            if length:
                await reader.readexactly(length)
            if response is not None and response.code >= 200 and _ours(response, tx):
                return response
    except asyncio.IncompleteReadError as exc:
        raise EOFError("connection closed before a final response") from exc
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


def _content_length(head: bytes) -> int:
    for line in head.decode("utf-8", "replace").split("\r\n"):
        name, sep, value = line.partition(":")
        if sep and name.strip().lower() in ("content-length", "l"):
            return int(value.strip() or 0) if value.strip().isdigit() else 0
    return 0
