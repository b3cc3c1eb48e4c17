"""The HTTP and TCP checks against real servers on loopback."""

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from ipaddress import ip_address

import pytest
from aiohttp import web

from app.domain.model import HttpMethod, Monitor, MonitorProtocol
from app.prober.checks import CHECKS, Probe, ProbeKit
from app.prober.checks.http import host_header, sni_of
from tests.support.listeners import serving
from tests.support.ports import free_port
from tests.support.sip_responder import make_self_signed_cert


@dataclass
class Site:
    """An aiohttp server whose status the test flips, recording what arrives."""

    status: int = 200
    seen: list[dict[str, str]] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)
    port: int = 0


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    state = Site()

    async def handler(request: web.Request) -> web.StreamResponse:
        state.seen.append(dict(request.headers))
        state.methods.append(request.method)
        if request.path == "/moved":
            raise web.HTTPMovedPermanently("/elsewhere")
        if request.path == "/slow":
            await asyncio.sleep(1.5)
        return web.Response(status=state.status, text="x" * 100_000)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    state.port = free_port()
    await web.TCPSite(runner, "127.0.0.1", state.port).start()
    yield state
    await runner.cleanup()


@pytest.fixture
async def kit() -> AsyncIterator[ProbeKit]:
    tools = ProbeKit(16)
    yield tools
    await tools.close()


def http(port: int, **monitor: object) -> Probe:
    return Probe(
        "127.0.0.1",
        port,
        Monitor(protocol=MonitorProtocol.HTTP, **monitor),
        "sbc1.example.net",
    )


async def run(probe: Probe, kit: ProbeKit):
    return await CHECKS[probe.monitor.protocol](probe, kit)


async def test_200_is_up_and_503_is_down_with_the_status_in_words(
    site: Site, kit: ProbeKit
) -> None:
    up = await run(http(site.port, timeout=2), kit)
    assert up.ok and up.reason.startswith("HTTP 200 OK in ")
    site.status = 503
    down = await run(http(site.port, timeout=2), kit)
    assert not down.ok and down.reason.startswith("HTTP 503 Service Unavailable")
    assert down.outcome == "status"


def test_the_host_header_names_the_port_unless_it_is_the_schemes() -> None:
    def host(name: str, port: int, https: bool = False) -> str:
        return host_header(Probe("127.0.0.1", port, Monitor(), name), https)

    assert host("status.example.net", 80) == "status.example.net"
    assert host("status.example.net", 443, https=True) == "status.example.net"
    assert host("status.example.net", 8443, https=True) == "status.example.net:8443"
    assert host("2001:db8::1", 8080) == "[2001:db8::1]:8080"
    assert host("sbc.example:9000", 8080) == "sbc.example:9000"  # as given
    assert sni_of("[2001:db8::1]") == "2001:db8::1"
    assert sni_of("sbc.example:9000") == "sbc.example"


async def test_expected_status_ranges_decide(site: Site, kit: ProbeKit) -> None:
    site.status = 503
    assert (await run(http(site.port, expected_status="200-299,503"), kit)).ok
    site.status = 204
    assert not (await run(http(site.port, expected_status="200,300-399"), kit)).ok


async def test_host_header_and_custom_headers_arrive(site: Site, kit: ProbeKit) -> None:
    probe = http(
        site.port,
        headers=(("X-Probe", "tmdns"), ("Authorization", "k")),
        host="status.example.net",
    )
    probe = Probe(probe.address, probe.port, probe.monitor, "status.example.net")
    assert (await run(probe, kit)).ok
    headers = site.seen[-1]
    # RFC 9110: the port too, as it is not HTTP's own 80.
    assert headers["Host"] == f"status.example.net:{site.port}"
    assert headers["X-Probe"] == "tmdns" and headers["Authorization"] == "k"
    assert "tmdns" in headers["User-Agent"]


async def test_head_is_used_when_asked(site: Site, kit: ProbeKit) -> None:
    assert (await run(http(site.port, method=HttpMethod.HEAD), kit)).ok
    assert site.methods[-1] == "HEAD"


async def test_a_redirect_fails_unless_expected_and_is_not_followed(
    site: Site, kit: ProbeKit
) -> None:
    moved = await run(http(site.port, path="/moved"), kit)
    assert not moved.ok and "301" in moved.reason
    assert len(site.seen) == 1  # /elsewhere was never requested
    assert (await run(http(site.port, path="/moved", expected_status="301"), kit)).ok


async def test_a_server_that_never_answers_times_out(site: Site, kit: ProbeKit) -> None:
    verdict = await run(http(site.port, path="/slow", timeout=0.3), kit)
    assert not verdict.ok and verdict.reason == "timeout after 0.3 s"
    assert verdict.outcome == "timeout"


@contextlib.asynccontextmanager
async def black_hole() -> AsyncIterator[int]:
    """Accepts connections and never says a word."""
    held: list[asyncio.StreamWriter] = []

    async def hold(_r: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    port = free_port()
    server = await asyncio.start_server(hold, "127.0.0.1", port)
    try:
        yield port
    finally:
        for writer in held:
            writer.close()
        server.close()
        await server.wait_closed()


async def test_http_to_a_black_hole_times_out(kit: ProbeKit) -> None:
    async with black_hole() as port:
        verdict = await run(http(port, timeout=0.4), kit)
    assert not verdict.ok and verdict.reason == "timeout after 0.4 s"


@pytest.mark.parametrize("protocol", [MonitorProtocol.HTTP, MonitorProtocol.TCP])
async def test_a_closed_port_is_refused(
    kit: ProbeKit, protocol: MonitorProtocol
) -> None:
    probe = Probe("127.0.0.1", free_port(), Monitor(protocol=protocol, timeout=1), "x")
    verdict = await run(probe, kit)
    assert not verdict.ok and verdict.reason == "connection refused"


async def test_tcp_connect_to_a_listener_is_up(kit: ProbeKit) -> None:
    async with black_hole() as port:
        probe = Probe("127.0.0.1", port, Monitor(protocol=MonitorProtocol.TCP), "x")
        verdict = await run(probe, kit)
    assert verdict.ok and verdict.reason.startswith("TCP connect in ")


async def test_https_uses_sni_from_host_and_verifies_only_when_asked(
    kit: ProbeKit, tmp_path
) -> None:
    cert = make_self_signed_cert(tmp_path)
    context = cert.server_context()
    names: list[str | None] = []
    context.sni_callback = lambda _sock, name, _ctx: names.append(name)

    async def ok(_request: web.Request) -> web.Response:
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_get("/", ok)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port, ssl_context=context).start()
    try:
        monitor = Monitor(protocol=MonitorProtocol.HTTPS, timeout=2)
        probe = Probe("127.0.0.1", port, monitor, "portal.example.net")
        verdict = await run(probe, kit)
        assert verdict.ok, verdict.reason  # self-signed: fine, as Azure
        assert names[-1] == "portal.example.net"
        strict = Probe(
            "127.0.0.1", port, replace(monitor, verify_tls=True), "x.example"
        )
        rejected = await run(strict, kit)
        assert not rejected.ok and rejected.outcome == "tls"
    finally:
        await runner.cleanup()


@pytest.fixture
async def bodies() -> AsyncIterator[int]:
    """A server whose body depends on the path: /ok says healthy at once,
    /late says it only after 6,000 bytes, /chunked in small streamed pieces."""

    async def handler(request: web.Request) -> web.StreamResponse:
        if request.path == "/late":
            return web.Response(text="x" * 6000 + "healthy")
        if request.path == "/chunked":
            response = web.StreamResponse()
            response.enable_chunked_encoding()
            await response.prepare(request)
            for piece in (b"sta", b"tus: hea", b"lthy", b"\n" * 20_000):
                await response.write(piece)
            await response.write_eof()
            return response
        if request.path == "/sick":
            return web.Response(text='{"status": "degraded"}')
        return web.Response(text='{"status": "healthy"}')

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    yield port
    await runner.cleanup()


async def test_body_contains_is_searched_in_the_first_5120_bytes(
    bodies: int, kit: ProbeKit
) -> None:
    """Route 53's string matching: up when the body holds the string (however
    the server chunks it), down with the reason in words when it does not, and
    a match beyond the first 5,120 bytes does not count."""
    found = await run(http(bodies, path="/ok", body_contains="healthy"), kit)
    assert found.ok and found.outcome == "ok"
    chunked = await run(http(bodies, path="/chunked", body_contains="healthy"), kit)
    assert chunked.ok
    sick = await run(http(bodies, path="/sick", body_contains="healthy"), kit)
    assert not sick.ok and sick.outcome == "body"
    assert sick.reason.startswith("HTTP 200 OK in ")
    assert sick.reason.endswith("ms, body lacks 'healthy'")
    late = await run(http(bodies, path="/late", body_contains="healthy"), kit)
    assert not late.ok and "body lacks 'healthy'" in late.reason
    # Without body_contains only the status counts, as before.
    assert (await run(http(bodies, path="/sick"), kit)).ok


async def test_a_failed_status_is_reported_before_any_body(
    site: Site, kit: ProbeKit
) -> None:
    site.status = 503
    down = await run(http(site.port, timeout=2, body_contains="healthy"), kit)
    assert not down.ok and down.outcome == "status"
    assert "body" not in down.reason


async def test_probes_leave_from_the_source_address_for_targets_of_its_family() -> None:
    """TMDNS_PROBER__SOURCE_ADDRESS: a firewall that admits health checks from
    one address sees them come from there, over TCP and HTTP; an IPv6 target
    is still probed (from the system's own address)."""
    peers: list[str] = []

    async def seen(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peers.append(writer.get_extra_info("peername")[0])
        writer.close()

    async def handler(request: web.Request) -> web.Response:
        peers.append(str(request.remote))
        return web.Response(text="ok")

    tcp_port = free_port()
    server = await asyncio.start_server(seen, "127.0.0.1", tcp_port)
    app = web.Application()
    app.router.add_get("/", handler)
    source = ip_address("127.0.0.21")
    tools = ProbeKit(4, source)
    try:
        async with serving(app) as http_port:
            tcp = Probe("127.0.0.1", tcp_port, Monitor(timeout=2), "127.0.0.1")
            assert (await run(tcp, tools)).ok
            assert (await run(http(http_port, timeout=2), tools)).ok
        assert peers == ["127.0.0.21", "127.0.0.21"]
        assert tools.local_addr("::1") is None
        assert tools.local_addr("sbc.example.net") is None
    finally:
        await tools.close()
        server.close()
        await server.wait_closed()
