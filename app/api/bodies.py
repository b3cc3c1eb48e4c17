"""A request body must arrive in time: a client that sends a header and then
trickles (or never sends) its body would otherwise hold a connection and a
handler for as long as it likes."""

from __future__ import annotations

import asyncio

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from app.api.errors import problem


def body_within(seconds: float) -> Middleware:
    """Read the whole body before the handler runs, within `seconds`; 408 and
    a closed connection otherwise. aiohttp keeps the body read, so handlers
    read it again for free."""

    @web.middleware
    async def read_body(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.body_exists:
            try:
                async with asyncio.timeout(seconds):
                    await request.read()
            except TimeoutError:
                response = problem(
                    408,
                    "request_timeout",
                    f"the request body did not arrive within {seconds:g} s",
                )
                response.force_close()
                return response
        return await handler(request)

    return read_body
