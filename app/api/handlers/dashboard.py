"""GET / and /ui/{file}: the dashboard, static files that call the API.

The page holds no data, so it is served without a token (app.api.auth): the
user signs in on it and every number comes from the authenticated API. Its
Content-Security-Policy lets it run only its own files and talk only to this
server, so a hostile string in a zone, reason or audit entry can neither run
script nor carry the token elsewhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from aiohttp import web

from app.store.base import NotFound

# No I/O at import: the path is only joined here and read per request.
DIRECTORY = Path(__file__).parent.parent / "dashboard"

# The allow-list: a name not in it is 404 whatever is on disk, so neither
# `..` nor an encoded slash in {file} reaches outside this directory.
# tests/e2e/test_dashboard.py checks it names exactly the directory's files.
FILES: Mapping[str, str] = MappingProxyType(
    {
        "index.html": "text/html; charset=utf-8",
        "dashboard.css": "text/css; charset=utf-8",
        "dashboard.js": "text/javascript; charset=utf-8",
        "api.js": "text/javascript; charset=utf-8",
        "dom.js": "text/javascript; charset=utf-8",
        "sse.js": "text/javascript; charset=utf-8",
        "charts.js": "text/javascript; charset=utf-8",
        "profiles.js": "text/javascript; charset=utf-8",
        "tools.js": "text/javascript; charset=utf-8",
    }
)

POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; form-action 'none'; frame-ancestors 'none'; "
    "base-uri 'none'"
)
SECURITY_HEADERS: Mapping[str, str] = MappingProxyType(
    {
        "Content-Security-Policy": POLICY,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        # Revalidated on every load (the ETag makes that a 304), so an upgrade
        # never leaves a browser running old script against a new API.
        "Cache-Control": "no-cache",
    }
)


def _file(name: str) -> web.FileResponse:
    content_type = FILES.get(name)
    if content_type is None:
        raise NotFound("no such dashboard file")
    headers = {**SECURITY_HEADERS, "Content-Type": content_type}
    return web.FileResponse(DIRECTORY / name, headers=headers)


async def index(request: web.Request) -> web.FileResponse:
    return _file("index.html")


async def asset(request: web.Request) -> web.FileResponse:
    return _file(request.match_info["file"])
