"""The API reference page in a real browser: Debian's Chromium, driven by Playwright.

The page must work with the network closed: everything it needs is inline, and
it fetches nothing but ./openapi.json from the server that served it.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import aiohttp
import pytest

from app.api.handlers.docs import PAGE
from app.api.openapi import openapi_document
from app.domain.model import Method
from tests.support.tmdns import Tmdns

if TYPE_CHECKING:
    from playwright.async_api import Browser, ConsoleMessage
with contextlib.suppress(ImportError):  # the browser fixture says what is missing
    from playwright.async_api import expect

pytestmark = pytest.mark.e2e


@pytest.fixture
async def api_base(tm: Tmdns) -> str:
    """A whole tmdns serving its own documentation."""
    return tm.base


async def test_the_document_and_the_page_are_served(api_base: str) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.get(api_base + "/openapi.json") as response:
            assert response.status == 200
            assert response.content_type == "application/json"
            assert await response.json() == openapi_document()
        async with http.get(api_base + "/docs") as response:
            assert response.status == 200
            assert response.content_type == "text/html"
            policy = response.headers["Content-Security-Policy"]
            assert "default-src 'none'" in policy and "connect-src 'self'" in policy
            assert await response.text() == PAGE


def test_the_page_inserts_no_markup_and_loads_nothing_from_elsewhere() -> None:
    for risky in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write"):
        assert risky not in PAGE
    for remote in ("http:", "https:", "src=", "@import", "url("):
        assert remote not in PAGE
    assert PAGE.count("href=") == 1 and '<link rel="icon" href="data:,">' in PAGE


async def test_the_reference_renders_operations_and_schemas(
    api_base: str, browser: Browser
) -> None:
    page = await browser.new_page()
    requested: list[str] = []
    problems: list[str] = []
    page.on("request", lambda r: requested.append(r.url))
    page.on("pageerror", lambda e: problems.append(str(e)))

    def console(message: ConsoleMessage) -> None:
        if message.type == "error":
            problems.append(message.text)

    page.on("console", console)

    await page.goto(api_base + "/docs")
    await page.wait_for_selector("body[data-ready=true]", timeout=10_000)

    document = openapi_document()
    listed = await page.locator("details.op > summary").all_inner_texts()
    expected = {
        f"{method.upper()} {path}"
        for path, item in document["paths"].items()
        for method in item
    }
    assert {" ".join(text.split()[:2]) for text in listed} == expected
    assert any(t.startswith("POST /api/v1/zones/{zone}/profiles ") for t in listed)

    create = page.locator("#op-createProfile")
    method_row = create.locator(".request-body tr[data-property=method]")
    await expect(method_row).to_be_hidden()
    await create.locator("summary").click()
    await expect(method_row).to_be_visible()
    await expect(create.locator(".request-body a.ref").first).to_have_text("ProfileIn")
    cells = await method_row.locator("td").all_inner_texts()
    assert cells[0] == "method" and cells[1] == "Method" and cells[2] == "yes"
    for routing in Method:
        assert routing.value in cells[3]
    ttl = await create.locator(
        ".request-body tr[data-property=ttl] td"
    ).all_inner_texts()
    assert ttl[1] == "integer" and ">= 0" in ttl[3] and "default 60" in ttl[3]

    # A nested schema is a link that opens its component's table.
    monitor = _component(document, "ProfileIn")["properties"]["monitor"]["$ref"]
    name = monitor.rsplit("/", 1)[1]
    await create.locator(".request-body tr[data-property=monitor] a.ref").click()
    component = page.locator(f'details.schema[id="schema-{name}"]')
    await expect(component).to_have_attribute("open", "")
    await expect(component.locator("tr[data-property=interval]")).to_be_visible()

    # Headers and parameters of the endpoint collection are shown too.
    endpoints = page.locator("#op-listEndpoints")
    await endpoints.locator("summary").click()
    await expect(endpoints).to_contain_text("X-Total-Count")
    await expect(endpoints).to_contain_text("offline")
    await expect(page.locator("#op-healthz > summary")).to_contain_text("no token")

    assert problems == []  # no script error, no blocked resource (CSP)
    assert any(url == api_base + "/openapi.json" for url in requested)
    for url in requested:
        parts = urlsplit(url)
        assert parts.scheme == "data" or parts.hostname == "127.0.0.1", url
    await page.close()


def _component(document: dict[str, Any], name: str) -> dict[str, Any]:
    schema: dict[str, Any] = document["components"]["schemas"][name]
    return schema
