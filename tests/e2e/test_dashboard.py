"""The dashboard in a real browser: Debian's Chromium, driven by Playwright,
against a whole tmdns (DNS, API and prober) on loopback.

Each test does what an operator would (sign in, watch an endpoint fail, drain
one) and checks what they would notice: the page, and the DNS answers. Every
test also checks that the page logged no error and asked nothing of any
server but this one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import aiohttp
import pytest

from app.api.handlers.dashboard import DIRECTORY, FILES, POLICY
from app.domain.tokens import Scope, Token, digest_of
from tests.support.tmdns import TOKEN, Tmdns, started_tmdns

if TYPE_CHECKING:
    from playwright.async_api import Browser, ConsoleMessage, Locator, Page, Request
with contextlib.suppress(ImportError):  # the browser fixture says what is missing
    from playwright.async_api import expect

pytestmark = pytest.mark.e2e

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"
ZONE = {"name": "tm.example", "ns": ["ns.example.net"]}
PROFILES = "/zones/tm.example/profiles"
FULL_NAME = "sip.tm.example."
READ_SECRET = "a-read-only-token-for-the-dashboard"
RISKY = ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write")
BROWSER_HTTP_ERROR = re.compile(
    r"Failed to load resource: the server responded with a status of (\d{3})\b.*"
)
SECONDS = 1000  # Playwright counts milliseconds


@pytest.fixture
async def tm(tmp_path: Path) -> AsyncIterator[Tmdns]:
    """A whole tmdns whose DNS adds its answer counts every half second (not
    every 10 s), so a chart moves within a test."""
    dns = {"listen": "127.0.0.1:0", "traffic_interval": 0.5}
    async with started_tmdns(f"sqlite:///{tmp_path}/tmdns.db", dns=dns) as running:
        yield running


@dataclass
class Watched:
    """A browser tab with what it did on record: console and page errors, and
    the URL of every request it made."""

    page: Page
    root: str
    problems: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    # Chromium logs each HTTP error response of a fetch as a console error
    # ("Failed to load resource"), whatever the script does with it: the
    # refusals a test provokes on purpose, as (status, path).
    provoked: set[tuple[int, str]] = field(default_factory=set)

    def on_console(self, message: ConsoleMessage) -> None:
        if message.type != "error":
            return
        url = str(message.location.get("url", ""))
        refused = BROWSER_HTTP_ERROR.fullmatch(message.text)
        if refused and (int(refused[1]), urlsplit(url).path) in self.provoked:
            return
        self.problems.append(f"{message.text} ({url})")

    def on_request(self, request: Request) -> None:
        self.requests.append(request.url)

    def check(self) -> None:
        """No script error, no CSP violation, nothing fetched from elsewhere."""
        assert self.problems == []
        assert self.requests, "the page made no request at all"
        for url in self.requests:
            parts = urlsplit(url)
            assert parts.scheme == "data" or parts.hostname == "127.0.0.1", url
            assert parts.path != "/favicon.ico"  # the page names a data: icon

    async def sign_in(self, token: str = TOKEN) -> None:
        await self.page.goto(self.root + "/")
        await self.page.fill("input[name=token]", token)
        await self.page.click("#signin-button")
        await self.page.wait_for_selector("body[data-ready=true]", timeout=10 * SECONDS)

    async def screenshot(self, name: str) -> None:
        ARTIFACTS.mkdir(exist_ok=True)
        await self.page.screenshot(
            path=ARTIFACTS / f"dashboard-{name}.png", full_page=True
        )

    def row(self, endpoint: str, profile: str = FULL_NAME) -> Locator:
        return self.page.locator(
            f'[data-profile="{profile}"] table.endpoints tr[data-endpoint="{endpoint}"]'
        )

    async def count_reaches(self, selector: str, at_least: int) -> None:
        """Wait, without reloading, until the chart part at `selector` counts
        (its data-answers, else data-queries) at least `at_least`."""
        await self.page.wait_for_function(
            """([selector, wanted]) => {
                const node = document.querySelector(selector);
                return node !== null && Number(node.dataset.answers ??
                                               node.dataset.queries) >= wanted;
            }""",
            arg=[selector, at_least],
            timeout=15 * SECONDS,
        )

    async def stored_token(self) -> str | None:
        value: str | None = await self.page.evaluate(
            "() => sessionStorage.getItem('tmdns.token')"
        )
        return value


@pytest.fixture
async def watched(tm: Tmdns, browser: Browser) -> AsyncIterator[Watched]:
    page = await browser.new_page(viewport={"width": 1400, "height": 900})
    tab = Watched(page, tm.base.removesuffix("/api/v1"))
    page.on("console", tab.on_console)
    page.on("pageerror", lambda error: tab.problems.append(f"page error: {error}"))
    page.on("request", tab.on_request)
    yield tab
    await page.close()


def two_endpoints(method: str = "priority") -> dict[str, Any]:
    return {
        "name": "sip",
        "method": method,
        "monitor": {"protocol": "none"},
        "endpoints": [
            {"name": "a", "address": "127.0.0.10"},
            {"name": "b", "address": "127.0.0.11"},
        ],
    }


async def seeded(tm: Tmdns, profile: dict[str, Any]) -> None:
    """The zone and the profile, once DNS answers for it."""
    await tm.ok("POST", "/zones", ZONE)
    await tm.ok("POST", PROFILES, profile)

    async def answering() -> bool:
        return bool(await tm.addresses(FULL_NAME))

    await tm.wait_for(answering, limit=3.0, every=0.1)


async def raw_get(port: int, target: str) -> int:
    """The status of a GET of `target` sent byte for byte (a client library
    would resolve the `..` before sending it)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    await writer.drain()
    status_line = await reader.readline()
    writer.close()
    await writer.wait_closed()
    return int(status_line.split()[1])


async def test_the_page_and_its_files_are_served_strictly_and_nothing_else(
    tm: Tmdns,
) -> None:
    root = tm.base.removesuffix("/api/v1")
    assert {p.name for p in DIRECTORY.iterdir()} == set(FILES)
    async with aiohttp.ClientSession() as http:
        for name, target in [("index.html", "/")] + [(n, "/ui/" + n) for n in FILES]:
            async with http.get(root + target) as response:  # no token needed
                assert response.status == 200, target
                assert response.headers["Content-Type"] == FILES[name]
                assert response.headers["Content-Security-Policy"] == POLICY
                assert response.headers["X-Content-Type-Options"] == "nosniff"
                assert response.headers["Referrer-Policy"] == "no-referrer"
                assert response.headers["Cache-Control"] == "no-cache"
                text = await response.text()
            for risky in (*RISKY, "http:", "https:", "style=", "<style", "eval("):
                assert risky not in text, (name, risky)
            if name.endswith(".html"):
                assert all(" src=" in tag for tag in re.findall(r"<script[^>]*>", text))
        assert POLICY == (
            "default-src 'none'; script-src 'self'; style-src 'self'; "
            "connect-src 'self'; img-src 'self' data:; form-action 'none'; "
            "frame-ancestors 'none'; base-uri 'none'"
        )
        for missing in ("/ui/unknown.js", "/ui/", "/ui/dashboard.JS", "/ui/.hidden"):
            async with http.get(root + missing) as response:
                assert response.status == 404, missing
        # The page's openness does not open the API: it still wants a token.
        async with http.get(tm.base + "/zones") as response:
            assert response.status == 401
    port = tm.run.api_port
    for escape in (
        "/ui/../api/v1/zones",
        "/ui/..%2Fhandlers%2Fdashboard.py",
        "/ui/%2e%2e%2fdashboard%2findex.html",
        "/ui/..%2F..%2F..%2Fpyproject.toml",
    ):
        assert await raw_get(port, escape) == 404, escape


async def test_a_bad_token_is_refused_and_a_good_one_signs_in(
    tm: Tmdns, watched: Watched
) -> None:
    await seeded(tm, two_endpoints())
    page = watched.page
    watched.provoked.add((401, "/api/v1/whoami"))
    await page.goto(watched.root + "/")
    await page.fill("input[name=token]", "not-the-token")
    await page.click("#signin-button")
    error = page.locator("#signin-error")
    await expect(error).to_be_visible()
    await expect(error).to_contain_text("not accepted")
    await expect(page.locator("#app")).to_be_hidden()
    assert await watched.stored_token() is None
    await watched.screenshot("signin-refused")

    await page.fill("input[name=token]", TOKEN)
    await page.click("#signin-button")
    await page.wait_for_selector("body[data-ready=true]", timeout=10 * SECONDS)
    await expect(error).to_be_hidden()
    await expect(page.locator(f'[data-profile="{FULL_NAME}"] h3')).to_have_text(
        FULL_NAME
    )
    await expect(page.locator("#who")).to_contain_text("bootstrap")
    assert page.url == watched.root + "/"  # no token, no query, no fragment
    assert await watched.stored_token() == TOKEN
    assert await page.locator("input[name=token]").input_value() == ""

    # The tab remembers the session, and forgets it on signing out.
    await page.reload()
    await page.wait_for_selector("body[data-ready=true]", timeout=10 * SECONDS)
    await expect(watched.row("a")).to_be_visible()
    await page.click("#sign-out")
    await expect(page.locator("#signin-form")).to_be_visible()
    await expect(page.locator("[data-profile]")).to_have_count(0)
    assert await watched.stored_token() is None
    assert all(TOKEN not in url for url in watched.requests)
    watched.check()


async def test_an_endpoint_goes_offline_on_the_page_when_its_listener_stops(
    tm: Tmdns, watched: Watched
) -> None:
    async def accept(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    primary = await asyncio.start_server(accept, "127.0.0.1", 0)
    backup = await asyncio.start_server(accept, "127.0.0.1", 0)
    monitor = {
        "protocol": "tcp",
        "port": primary.sockets[0].getsockname()[1],
        "interval": 1,
        "timeout": 0.5,
        "tolerated_failures": 0,
    }
    profile = {
        "name": "sip",
        "method": "priority",
        "monitor": monitor,
        "endpoints": [
            {"name": "primary", "address": "127.0.0.1"},
            {
                "name": "backup",
                "address": "127.0.0.2",
                "monitor": {  # probed at the second listener
                    "address": "127.0.0.1",
                    "port": backup.sockets[0].getsockname()[1],
                },
            },
        ],
    }
    async with primary, backup:  # closed whatever happens
        await tm.ok("POST", "/zones", ZONE)
        await tm.ok("POST", PROFILES, profile)
        await watched.sign_in()
        row = watched.row("primary")
        for name in ("primary", "backup"):
            await expect(watched.row(name)).to_have_attribute(
                "data-state", "online", timeout=10 * SECONDS
            )
        await watched.page.evaluate("() => { window.notReloaded = true; }")

        primary.close()
        await primary.wait_closed()
        stopped = time.monotonic()
        await expect(row).to_have_attribute(
            "data-state", "offline", timeout=10 * SECONDS
        )
        took = time.monotonic() - stopped
        assert took < 10, took
        assert await watched.page.evaluate("() => window.notReloaded === true")
        await expect(watched.row("backup")).to_have_attribute("data-state", "online")
        assert await tm.addresses(FULL_NAME) == ["127.0.0.2"]

        # Why, and when: the reason, each vantage's view, the transitions.
        await expect(row.locator("td").nth(3)).to_contain_text("refused")
        await expect(row.locator("ul.vantages li[data-state=offline]")).to_have_count(1)
        await expect(row.locator("svg.timeline rect.state-offline")).to_have_count(1)
        await watched.page.locator(".transitions summary").click()
        moves = watched.page.locator(".transitions tbody tr[data-endpoint=primary]")
        await expect(moves.first).to_contain_text("offline")  # newest first
        await expect(moves.last).to_contain_text("online")

        # The answers went to the backup, and its share of the chart says so.
        for _ in range(12):
            assert await tm.addresses(FULL_NAME) == ["127.0.0.2"]
        profile_box = f'[data-profile="{FULL_NAME}"]'
        await watched.count_reaches(
            profile_box + " [data-chart=split] li[data-series-name=backup]", 12
        )
        await watched.screenshot("offline")
    watched.check()


async def test_a_drain_from_the_page_moves_the_dns_answer(
    tm: Tmdns, watched: Watched
) -> None:
    await seeded(tm, two_endpoints())
    assert await tm.addresses(FULL_NAME) == ["127.0.0.10"]
    await watched.sign_in()
    row = watched.row("a")

    # What the API refuses is said on the page, in the API's words.
    watched.provoked.add((422, "/api/v1/zones/tm.example./profiles/sip/endpoints/a"))
    await row.locator("select[data-field=state]").select_option("drain")
    await row.locator("input[data-field=reason]").fill("a\ttab")
    await row.locator("button[data-action=override]").click()
    error = watched.page.locator(f'[data-profile="{FULL_NAME}"] > p.error')
    await expect(error).to_contain_text("override.reason")
    assert await tm.addresses(FULL_NAME) == ["127.0.0.10"]

    await row.locator("input[data-field=reason]").fill("kernel upgrade")
    await row.locator("input[data-field=minutes]").fill("30")
    clicked = time.time()
    await row.locator("button[data-action=override]").click()
    await expect(row).to_have_attribute("data-override", "drain")
    await expect(row.locator("td").nth(2)).to_contain_text("kernel upgrade")
    await expect(error).to_be_hidden()

    async def drained() -> bool:
        return await tm.addresses(FULL_NAME) == ["127.0.0.11"]

    await tm.wait_for(drained, limit=3.0, every=0.1)
    endpoint = await tm.ok("GET", PROFILES + "/sip/endpoints/a")
    override = endpoint["override"]
    assert override["state"] == "drain" and override["reason"] == "kernel upgrade"
    assert abs(override["until"] - (clicked + 1800)) < 60
    audit = watched.page.locator("#audit tbody tr")
    await expect(audit.first).to_contain_text("endpoint.update", timeout=5 * SECONDS)
    await watched.screenshot("drain")

    await row.locator("button[data-action=clear-override]").click()
    await expect(row).to_have_attribute("data-override", "")

    async def undrained() -> bool:
        return await tm.addresses(FULL_NAME) == ["127.0.0.10"]

    await tm.wait_for(undrained, limit=3.0, every=0.1)

    await row.locator("button[data-action=toggle-enabled]").click()
    await expect(row).to_have_attribute("data-enabled", "false")
    await tm.wait_for(drained, limit=3.0, every=0.1)
    watched.check()


async def test_a_read_token_sees_the_profiles_but_no_controls(
    tm: Tmdns, watched: Watched
) -> None:
    await seeded(tm, two_endpoints())
    reader = Token("viewer", Scope.READ, digest_of(READ_SECRET))
    await tm.run.store.create_token(reader, actor="test")
    await watched.sign_in(READ_SECRET)
    page = watched.page
    await expect(page.locator(f'[data-profile="{FULL_NAME}"] h3')).to_have_text(
        FULL_NAME
    )
    await expect(watched.row("a")).to_be_visible()
    await expect(page.locator("#who")).to_contain_text("viewer")
    await expect(page.locator("#who")).to_contain_text("read only")
    for control in ("[data-action]", ".controls", "[data-field=reason]", "select"):
        assert await page.locator(f"#profiles {control}").count() == 0, control
    assert await page.get_by_role("button", name="Disable").count() == 0

    # Reading is allowed: explain answers, and says what it refuses.
    form = page.locator("#explain-form")
    await form.locator("input[name=name]").fill(FULL_NAME)
    await form.locator("button[type=submit]").click()
    await expect(page.locator("#explain-result")).to_contain_text("127.0.0.10")
    watched.provoked.add((422, "/api/v1/explain"))
    await form.locator("input[name=name]").fill("no..such")
    await form.locator("button[type=submit]").click()
    await expect(page.locator("#explain-error")).to_contain_text("name")
    audit = page.locator("#audit tbody tr")
    await expect(audit).to_have_count(3)
    await expect(audit.first).to_contain_text("token.create")  # newest first
    await expect(audit.last).to_contain_text("zone.create")
    await watched.screenshot("read-only")
    watched.check()


async def test_the_traffic_chart_counts_dns_queries(
    tm: Tmdns, watched: Watched
) -> None:
    await seeded(tm, two_endpoints("weighted"))
    await watched.sign_in()
    volume = watched.page.locator(f'[data-profile="{FULL_NAME}"] [data-chart=volume]')
    await expect(volume).to_be_visible()
    before = int(await volume.get_attribute("data-queries") or "0")
    for _ in range(12):
        assert await tm.addresses(FULL_NAME)
    # Without a reload: the page polls the traffic every 5 s.
    await watched.count_reaches(
        f'[data-profile="{FULL_NAME}"] [data-chart=volume]', before + 12
    )
    split = watched.page.locator(f'[data-profile="{FULL_NAME}"] [data-chart=split]')
    answers = int(await split.get_attribute("data-answers") or "0")
    assert answers >= before + 12
    shares = await split.locator("li[data-answers]").evaluate_all(
        "items => items.map(li => [li.dataset.seriesName, Number(li.dataset.answers)])"
    )
    assert [name for name, _ in shares] == ["a", "b"]
    assert sum(n for _, n in shares) == answers
    assert await volume.locator("rect.bar").count() == 60
    await watched.screenshot("traffic")
    watched.check()


async def test_the_stream_resumes_from_the_last_event_after_a_drop(
    tm: Tmdns, watched: Watched
) -> None:
    """The first stream says one event and ends; the page reconnects, naming
    it in Last-Event-ID, and shows it is live again."""
    await seeded(tm, two_endpoints())
    asked: list[str | None] = []

    async def stream(route: Any) -> None:
        asked.append(route.request.headers.get("last-event-id"))
        if len(asked) == 1:
            body = 'retry: 200\n\nid: 41\nevent: config\ndata: {"subject":"x"}\n\n'
            await route.fulfill(
                status=200, headers={"Content-Type": "text/event-stream"}, body=body
            )
        else:
            await route.continue_()

    await watched.page.route("**/api/v1/events", stream)
    await watched.sign_in()
    live = watched.page.locator("#live")
    await expect(live).to_have_attribute("data-live", "on")
    deadline = time.monotonic() + 5
    while len(asked) < 2 and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert asked[:2] == [None, "41"]
    await expect(live).to_have_attribute("data-live", "on")
    watched.check()


async def test_the_event_parser_takes_frames_split_anywhere(
    tm: Tmdns, watched: Watched
) -> None:
    await watched.page.goto(watched.root + "/")
    frames = await watched.page.evaluate(
        """async () => {
            const { SseParser } = await import("./ui/sse.js");
            const text = "retry: 2000\\r\\n\\r\\n: keepalive\\n\\n" +
              "id: 7\\nevent: health\\ndata: {\\"a\\":1}\\n\\n" +
              "data: one\\ndata:two\\r\\r" +
              "id: 8\\r\\nevent: config\\r\\ndata: {}\\r\\n\\r\\n";
            const runs = [];
            for (let cut = 0; cut <= text.length; cut++) {
              const seen = [];
              const parser = new SseParser((f) => seen.push([f.id, f.type, f.data]));
              parser.push(text.slice(0, cut));
              parser.push(text.slice(cut));
              runs.push(JSON.stringify([seen, parser.retry]));
            }
            return runs;
        }"""
    )
    expected = [
        [
            ["7", "health", '{"a":1}'],
            ["7", "message", "one\ntwo"],
            ["8", "config", "{}"],
        ],
        2000,
    ]
    assert [json.loads(run) for run in frames] == [expected] * len(frames)
    watched.check()
