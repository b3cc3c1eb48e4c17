"""Bearer-token authentication on every API call (DESIGN §6)."""

from __future__ import annotations

from aiohttp import web

from app.api.errors import Handler, problem
from app.api.keys import ACTOR, TOKENS
from app.domain.tokens import Token, allows, find_token

OPEN_PATHS = frozenset({"/healthz", "/metrics"})
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


@web.middleware
async def bearer_auth(request: web.Request, handler: Handler) -> web.StreamResponse:
    if request.path in OPEN_PATHS:
        return await handler(request)
    scheme, _, secret = request.headers.get("Authorization", "").partition(" ")
    known: tuple[Token, ...] = request.app[TOKENS]
    token = (
        find_token(known, secret.strip())
        if scheme.lower() == "bearer" and secret.strip()
        else None
    )
    if token is None:
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
    request[ACTOR] = token.name
    return await handler(request)
