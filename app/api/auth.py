"""Bearer-token authentication on every API call (DESIGN §6).

Tokens are looked up by the SHA-256 of what the client presents; the secret is
never stored or logged. Repeated failures from one address are slowed down.
"""

from __future__ import annotations

import asyncio
import time

from aiohttp import web

from app.api.errors import Handler, problem
from app.api.keys import ACTOR, LIMITER, SCOPE, STORE, TOKENS
from app.domain.tokens import Token, allows, digest_of, find_token

OPEN_PATHS = frozenset({"/healthz", "/metrics", "/api/v1/openapi.json", "/api/v1/docs"})
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# The dashboard's page and files (app.api.handlers.dashboard) hold no data:
# everything on it comes from this API, with the token the user signs in with.
# Only allow-listed names are served under /ui/, whatever the path says.
PAGE_PATHS = frozenset({"/"})
PAGE_PREFIX = "/ui/"


async def _authenticate(request: web.Request, secret: str) -> Token | None:
    known: tuple[Token, ...] = request.app[TOKENS]
    bootstrap = find_token(known, secret)
    if bootstrap is not None:
        return bootstrap
    return await request.app[STORE].find_token(digest_of(secret))


@web.middleware
async def bearer_auth(request: web.Request, handler: Handler) -> web.StreamResponse:
    path = request.path
    if path in OPEN_PATHS or path in PAGE_PATHS or path.startswith(PAGE_PREFIX):
        return await handler(request)
    scheme, _, secret = request.headers.get("Authorization", "").partition(" ")
    token = None
    if scheme.lower() == "bearer" and secret.strip():
        token = await _authenticate(request, secret.strip())
    if token is None:
        # Only failures wait, so guessing gets slow while a client with a good
        # token behind the same address is never held up.
        limiter, address = request.app[LIMITER], request.remote or "?"
        wait = limiter.delay(address, time.monotonic())
        limiter.failed(address, time.monotonic())
        if wait:
            await asyncio.sleep(wait)
        message = "a valid bearer token is required"
        response = problem(
            401,
            "unauthorized",
            message,
            [{"field": "Authorization", "message": message}],
        )
        response.headers["WWW-Authenticate"] = 'Bearer realm="tmdns"'
        return response
    if not allows(token, write=request.method not in READ_METHODS):
        return problem(403, "forbidden", f"token {token.name!r} may only read")
    request[ACTOR], request[SCOPE] = token.name, token.scope
    return await handler(request)
