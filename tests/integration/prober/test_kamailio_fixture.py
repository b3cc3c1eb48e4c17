"""The SIP fixtures themselves: a real Kamailio and the small SIP responder.

Each test sends a hand-written OPTIONS (RFC 3261 §11) over loopback and reads
what comes back, so that the prober's tests can rely on these servers.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import time
from collections.abc import AsyncIterator

import pytest

from tests.conftest import require
from tests.support.kamailio import Kamailio
from tests.support.sip_responder import (
    SipMessage,
    SipResponder,
    Transport,
    options_request,
    parse_head,
    parse_message,
)

pytestmark = pytest.mark.sip

TRANSPORTS: list[Transport] = ["UDP", "TCP", "TLS"]


class _Collect(asyncio.DatagramProtocol):
    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes] = asyncio.Queue()

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        self.queue.put_nowait(data)


async def ask(
    transport: Transport,
    port: int,
    *,
    context: ssl.SSLContext | None = None,
    timeout: float = 2.0,
) -> tuple[SipMessage, list[SipMessage]]:
    """Send one OPTIONS; the request, and the responses up to the first final one.

    Fewer (or none) when `timeout` passes first.
    """
    loop = asyncio.get_running_loop()
    target = ("127.0.0.1", port)
    responses: list[SipMessage] = []
    if transport == "UDP":
        udp, collect = await loop.create_datagram_endpoint(
            _Collect, local_addr=("127.0.0.1", 0)
        )
        try:
            request = options_request(transport, target, udp.get_extra_info("sockname"))
            udp.sendto(request, target)
            async with asyncio.timeout(timeout):
                while not responses or responses[-1].status < 200:
                    responses.append(parse_message(await collect.queue.get()))
        except TimeoutError:
            pass
        finally:
            udp.close()
        return parse_message(request), responses

    reader, writer = await asyncio.wait_for(
        asyncio.open_connection(*target, ssl=context if transport == "TLS" else None),
        timeout,
    )
    try:
        request = options_request(transport, target, writer.get_extra_info("sockname"))
        writer.write(request)
        await writer.drain()
        async with asyncio.timeout(timeout):
            while not responses or responses[-1].status < 200:
                head = await reader.readuntil(b"\r\n\r\n")
                response = parse_head(head[:-4])
                length = int(response.get("Content-Length") or 0)
                response.body = await reader.readexactly(length)
                responses.append(response)
    except TimeoutError:
        pass
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError, ssl.SSLError, TimeoutError):
            await asyncio.wait_for(writer.wait_closed(), 1)
    return parse_message(request), responses


def assert_answers(request: SipMessage, response: SipMessage) -> None:
    """The headers RFC 3261 §8.2.6.2 has a UAS copy from the request."""
    assert response.all("Via") == request.all("Via") or (
        # Kamailio adds received=/rport= to the top Via (RFC 3581); the rest matches.
        response.all("Via")[0].startswith(request.all("Via")[0].removesuffix(";rport"))
        and response.all("Via")[1:] == request.all("Via")[1:]
    )
    assert response.get("From") == request.get("From")
    assert response.get("Call-ID") == request.get("Call-ID")
    assert response.get("CSeq") == request.get("CSeq") == "1 OPTIONS"
    to = response.get("To")
    assert to is not None
    assert to.startswith(request.get("To") or "-")
    if response.status >= 200:
        assert ";tag=" in to
    assert response.get("Content-Length") == "0"


def test_the_request_is_well_formed() -> None:
    request = parse_message(
        options_request("TLS", ("127.0.0.1", 5061), ("127.0.0.1", 40000))
    )
    assert request.start_line == "OPTIONS sip:127.0.0.1:5061;transport=tls SIP/2.0"
    via = request.get("Via")
    assert via is not None
    assert via.startswith("SIP/2.0/TLS 127.0.0.1:40000;branch=z9hG4bK")
    assert request.get("Max-Forwards") == "70"
    assert ";tag=" in (request.get("From") or "")
    assert request.get("To") == "<sip:127.0.0.1:5061>"
    assert request.get("Call-ID")
    assert request.get("CSeq") == "1 OPTIONS"
    assert request.get("Contact") == "<sip:tmdns-test@127.0.0.1:40000;transport=tls>"
    assert request.get("Content-Length") == "0"


# ---------------------------------------------------------------- Kamailio


def tls_context_of(server: Kamailio) -> ssl.SSLContext:
    if not server.has_tls or server.certificate is None:
        require(f"kamailio has no TLS here: {server.tls_error}")
    assert server.certificate is not None
    return server.certificate.client_context()


def port_of(server: Kamailio, transport: Transport) -> int:
    if transport == "TLS":
        assert server.tls_port is not None
        return server.tls_port
    return server.udp_port if transport == "UDP" else server.tcp_port


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_kamailio_answers_options_with_200(
    kamailio: Kamailio, transport: Transport
) -> None:
    context = tls_context_of(kamailio) if transport == "TLS" else None
    request, responses = await ask(
        transport, port_of(kamailio, transport), context=context
    )
    assert [r.status for r in responses] == [200], kamailio.log()
    assert responses[0].reason == "OK"
    assert_answers(request, responses[0])


async def test_kamailio_stopped_answers_nothing_and_comes_back_on_start() -> None:
    with Kamailio() as server:
        ports = [server.udp_port, server.tcp_port, server.tls_port]
        server.stop()

        _, responses = await ask("UDP", server.udp_port, timeout=0.5)
        assert responses == []
        with pytest.raises(ConnectionRefusedError):
            await asyncio.open_connection("127.0.0.1", server.tcp_port)
        if server.tls_port is not None:
            with pytest.raises(ConnectionRefusedError):
                await asyncio.open_connection("127.0.0.1", server.tls_port)

        began = time.monotonic()
        server.start()
        assert time.monotonic() - began < 10
        assert [server.udp_port, server.tcp_port, server.tls_port] == ports
        for transport in TRANSPORTS:
            if transport == "TLS" and not server.has_tls:
                continue
            context = tls_context_of(server) if transport == "TLS" else None
            _, responses = await ask(
                transport, port_of(server, transport), context=context
            )
            assert [r.status for r in responses] == [200], (transport, server.log())


async def test_kamailio_options_status_is_a_knob() -> None:
    with Kamailio(options_status=503, tls=False) as server:
        assert not server.has_tls
        assert server.tls_port is None
        request, responses = await ask("UDP", server.udp_port)
        assert [(r.status, r.reason) for r in responses] == [
            (503, "Service Unavailable")
        ]
        assert_answers(request, responses[0])

        server.restart(options_status=200)
        _, responses = await ask("TCP", server.tcp_port)
        assert [r.status for r in responses] == [200]


def test_kamailio_answers_other_methods_with_404(kamailio: Kamailio) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.settimeout(2)
        request = options_request(
            "UDP", ("127.0.0.1", kamailio.udp_port), sock.getsockname()
        ).replace(b"OPTIONS", b"INFO")
        sock.sendto(request, ("127.0.0.1", kamailio.udp_port))
        response = parse_message(sock.recv(65535))
    assert response.status == 404
    assert response.get("CSeq") == "1 INFO"


# ---------------------------------------------------------------- responder


@pytest.fixture
async def responder() -> AsyncIterator[SipResponder]:
    async with SipResponder() as running:
        yield running


def responder_port(responder: SipResponder, transport: Transport) -> int:
    return responder.tls_port if transport == "TLS" else responder.port


def responder_context(responder: SipResponder) -> ssl.SSLContext:
    assert responder.certificate is not None
    return responder.certificate.client_context()


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("status", [200, 503, 408])
async def test_the_responder_answers_with_its_status(
    responder: SipResponder, transport: Transport, status: int
) -> None:
    responder.status = status
    request, responses = await ask(
        transport,
        responder_port(responder, transport),
        context=responder_context(responder),
    )
    assert [r.status for r in responses] == [status]
    assert_answers(request, responses[0])
    # Exactly what was sent, as the responder parsed it.
    assert responder.options(transport)[-1].get("Call-ID") == request.get("Call-ID")


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_responder_sends_100_trying_then_the_final_response(
    responder: SipResponder, transport: Transport
) -> None:
    responder.trying = True
    responder.final_delay = 0.2
    request, responses = await ask(
        transport,
        responder_port(responder, transport),
        context=responder_context(responder),
    )
    assert [(r.status, r.reason) for r in responses] == [(100, "Trying"), (200, "OK")]
    for response in responses:
        assert_answers(request, response)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_responder_stays_silent_when_told(
    responder: SipResponder, transport: Transport
) -> None:
    responder.status = None
    began = time.monotonic()
    _, responses = await ask(
        transport,
        responder_port(responder, transport),
        context=responder_context(responder),
        timeout=0.5,
    )
    assert responses == []
    assert time.monotonic() - began >= 0.45
    assert len(responder.options(transport)) == 1  # it did receive the request


async def test_the_responder_stopped_answers_nothing_and_starts_again() -> None:
    responder = SipResponder()
    async with responder:
        _, responses = await ask("TCP", responder.tcp_port)
        assert [r.status for r in responses] == [200]

    _, responses = await ask("UDP", responder.udp_port, timeout=0.5)
    assert responses == []
    for port in (responder.tcp_port, responder.tls_port):
        with pytest.raises(ConnectionRefusedError):
            await asyncio.open_connection("127.0.0.1", port)

    async with responder:  # the same ports again
        for transport in TRANSPORTS:
            _, responses = await ask(
                transport,
                responder_port(responder, transport),
                context=responder_context(responder),
            )
            assert [r.status for r in responses] == [200]
