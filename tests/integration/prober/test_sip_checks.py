"""SIP OPTIONS probes against a real Kamailio (Debian kamailio, UDP, TCP and TLS
with kamailio-tls-modules) and, for behaviours Kamailio cannot be told to show
(silence, 100 Trying first, 408), a small SIP responder in the test suite."""

from collections.abc import AsyncIterator
from ipaddress import ip_address

import pytest

from app.domain.model import Monitor, MonitorProtocol, SipSuccess
from app.prober.checks import CHECKS, Probe, ProbeKit
from tests.conftest import require
from tests.support.kamailio import Kamailio
from tests.support.sip_responder import SipResponder, parse_message

pytestmark = pytest.mark.sip
UDP, TCP, TLS = (
    MonitorProtocol.SIP_UDP,
    MonitorProtocol.SIP_TCP,
    MonitorProtocol.SIP_TLS,
)


@pytest.fixture
async def kit() -> AsyncIterator[ProbeKit]:
    tools = ProbeKit(8)
    yield tools
    await tools.close()


@pytest.fixture
async def responder() -> AsyncIterator[SipResponder]:
    async with SipResponder() as server:
        yield server


def port_of(server: Kamailio | SipResponder, protocol: MonitorProtocol) -> int:
    if protocol is TLS:
        if server.tls_port is None:
            require("Kamailio's TLS module did not load")
        return int(server.tls_port)  # type: ignore[arg-type]
    return server.udp_port


async def probe(
    kit: ProbeKit, port: int, protocol: MonitorProtocol, timeout: float = 2.0, **more
):
    monitor = Monitor(protocol=protocol, timeout=timeout, interval=timeout + 1, **more)
    return await CHECKS[protocol](Probe("127.0.0.1", port, monitor, "127.0.0.1"), kit)


@pytest.mark.parametrize("protocol", [UDP, TCP, TLS])
async def test_kamailio_answers_200_and_is_up(
    kamailio: Kamailio, kit: ProbeKit, protocol: MonitorProtocol
) -> None:
    verdict = await probe(kit, port_of(kamailio, protocol), protocol)
    assert verdict.ok, verdict.reason
    assert verdict.reason.startswith("SIP 200 OK in ")


@pytest.mark.parametrize("protocol", [UDP, TCP, TLS])
async def test_stopping_kamailio_fails_and_starting_it_recovers(
    kamailio: Kamailio, kit: ProbeKit, protocol: MonitorProtocol
) -> None:
    port = port_of(kamailio, protocol)
    kamailio.stop()
    try:
        down = await probe(kit, port, protocol, timeout=1.2)
        # On loopback even UDP learns at once (ICMP port unreachable).
        assert not down.ok and down.reason == "connection refused"
    finally:
        kamailio.start()
    assert (await probe(kit, port, protocol)).ok


async def test_a_503_is_down_unless_any_response_counts(kit: ProbeKit) -> None:
    with Kamailio(options_status=503, tls=False) as busy:
        down = await probe(kit, busy.udp_port, UDP)
        assert not down.ok and down.reason.startswith("SIP 503 Service Unavailable")
        up = await probe(kit, busy.udp_port, UDP, sip_success=SipSuccess.ANY_RESPONSE)
        assert up.ok
        listed = await probe(kit, busy.tcp_port, TCP, expected_status="200-299,503")
        assert listed.ok


async def test_the_request_is_a_proper_rfc3261_options(
    responder: SipResponder, kit: ProbeKit
) -> None:
    assert (await probe(kit, responder.udp_port, UDP)).ok
    [request] = responder.options("UDP")
    via = request.get("Via") or ""
    assert (
        via.startswith("SIP/2.0/UDP ") and ";branch=z9hG4bK" in via and "rport" in via
    )
    assert request.get("Max-Forwards") == "70"
    assert ";tag=" in (request.get("From") or "")
    assert request.get("CSeq") == "1 OPTIONS" and request.get("Call-ID")
    assert request.get("Content-Length") == "0" and request.get("Contact")
    assert "tmdns" in (request.get("User-Agent") or "")


async def test_provisional_responses_are_skipped(
    responder: SipResponder, kit: ProbeKit
) -> None:
    responder.trying = True
    for protocol, port in (
        (UDP, responder.udp_port),
        (TCP, responder.tcp_port),
        (TLS, responder.tls_port),
    ):
        verdict = await probe(kit, port, protocol)
        assert verdict.ok and verdict.reason.startswith("SIP 200"), protocol


async def test_silence_is_a_timeout_with_timer_a_retransmissions(
    responder: SipResponder, kit: ProbeKit
) -> None:
    responder.status = None
    verdict = await probe(kit, responder.udp_port, UDP, timeout=2.0)
    assert not verdict.ok and verdict.reason == "timeout after 2 s"
    # RFC 3261 Timer A: sent at 0, 0.5 and 1.5 s; the next would be at 3.5 s
    sent = responder.options("UDP")
    assert len(sent) == 3
    assert len({m.get("Via") for m in sent}) == 1  # one transaction, retransmitted


@pytest.mark.parametrize("policy", [SipSuccess.CODES, SipSuccess.ANY_RESPONSE])
async def test_a_408_is_never_up(
    responder: SipResponder, kit: ProbeKit, policy: SipSuccess
) -> None:
    responder.status = 408
    verdict = await probe(kit, responder.udp_port, UDP, sip_success=policy)
    assert not verdict.ok and verdict.reason.startswith("SIP 408")


def test_responses_to_someone_else_are_not_taken_for_ours() -> None:
    from app.prober.checks.sip import Transaction, _ours, parse_response

    ours = Transaction("z9hG4bKabc", "call-1@tmdns")
    raw = (
        b"SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bKother\r\n"
        b"Call-ID: call-1@tmdns\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n"
    )
    response = parse_response(raw)
    assert response is not None and response.code == 200
    assert not _ours(response, ours)
    assert parse_message(raw).status == 200


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
async def test_a_stopped_kamailio_fails_over_dns_and_comes_back(
    kamailio: Kamailio, tm
) -> None:
    await tm.ok("POST", "/zones", {"name": "tm.example", "ns": ["ns.example.net"]})
    await tm.ok(
        "POST",
        "/zones/tm.example/profiles",
        {
            "name": "sbc",
            "method": "priority",
            "monitor": {
                "protocol": "sip-udp",
                "port": kamailio.udp_port,
                "interval": 1,
                "timeout": 0.5,
                "tolerated_failures": 1,
            },
            "srv": [{"service": "_sip._udp", "port": 5060}],
            "endpoints": [
                {"name": "kam", "address": "127.0.0.1"},
                {
                    "name": "spare",
                    "address": "127.0.0.2",
                    "monitor": {"protocol": "none"},
                },
            ],
        },
    )
    state = "/zones/tm.example/profiles/sbc/endpoints/kam"
    await tm.wait_for(lambda: _is(tm, state, "online"), limit=2.0)
    kamailio.stop()
    try:
        await tm.wait_for(lambda: _answers(tm, ["127.0.0.2"]), limit=3.0)
        srv = (await tm.query("_sip._udp.sbc.tm.example.", "SRV")).answer[0]
        assert [r.target.to_text() for r in srv] == ["spare.sbc.tm.example."]
    finally:
        kamailio.start()
    await tm.wait_for(lambda: _answers(tm, ["127.0.0.1"]), limit=2.0)


async def _is(tm, path: str, state: str) -> bool:
    return bool((await tm.ok("GET", path))["state"] == state)


async def _answers(tm, expected: list[str]) -> bool:
    return await tm.addresses("sbc.tm.example.") == expected


@pytest.mark.parametrize("protocol", [UDP, TCP])
async def test_sip_options_leave_from_the_source_address(
    responder: SipResponder, protocol: MonitorProtocol
) -> None:
    """With TMDNS_PROBER__SOURCE_ADDRESS the OPTIONS comes from that address,
    over UDP and TCP alike, and its Via names it."""
    tools = ProbeKit(2, ip_address("127.0.0.22"))
    try:
        monitor = Monitor(protocol=protocol, timeout=2.0, interval=3.0)
        probe = Probe("127.0.0.1", responder.udp_port, monitor, "127.0.0.1")
        verdict = await CHECKS[protocol](probe, tools)
    finally:
        await tools.close()
    assert verdict.ok
    [received] = responder.requests
    assert received.peer[0] == "127.0.0.22"
    assert "127.0.0.22" in (received.message.get("Via") or "")
