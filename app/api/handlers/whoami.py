"""/whoami: the token's name and scope, so a client (the dashboard) shows
write controls only to a token that may use them."""

from __future__ import annotations

from aiohttp import web

from app.api.keys import ACTOR, SCOPE


async def whoami(request: web.Request) -> web.Response:
    return web.json_response({"name": request[ACTOR], "scope": request[SCOPE].value})
