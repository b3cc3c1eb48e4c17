"""Response headers that are the same for every resource: the generation a
change landed in, and CORS when the operator allows browsers from elsewhere."""

from __future__ import annotations

from collections.abc import Sequence

from aiohttp import web
from aiohttp.typedefs import Middleware

from app.api.errors import Handler
from app.api.keys import STORE

WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
GENERATION_HEADER = "X-Tmdns-Generation"


@web.middleware
async def generation_stamp(
    request: web.Request, handler: Handler
) -> web.StreamResponse:
    """A change's response names the configuration generation that holds it:
    DNS answers reflect it once /healthz shows that snapshot_generation."""
    response = await handler(request)
    if request.method in WRITES and response.status < 300:
        written = request.app[STORE].written_generation()
        if written is not None:
            response.headers[GENERATION_HEADER] = str(written)
    return response


def cors(origins: Sequence[str]) -> Middleware:
    """CORS for the listed origins only; with none listed (the default) no CORS
    header is ever sent, so browsers keep other sites out."""
    allowed = frozenset(origins)

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        origin = request.headers.get("Origin")
        if origin is None or origin not in allowed:
            return await handler(request)
        if (
            request.method == "OPTIONS"
            and "Access-Control-Request-Method" in request.headers
        ):
            response: web.StreamResponse = web.Response(status=204)
            response.headers["Access-Control-Allow-Methods"] = (
                "GET, POST, PUT, PATCH, DELETE"
            )
            response.headers["Access-Control-Allow-Headers"] = (
                "Authorization, Content-Type, If-Match"
            )
            response.headers["Access-Control-Max-Age"] = "600"
        else:
            response = await handler(request)
            response.headers["Access-Control-Expose-Headers"] = (
                f"ETag, {GENERATION_HEADER}, X-Total-Count, Link"
            )
        response.headers["Access-Control-Allow-Origin"] = origin
        response.headers["Vary"] = "Origin"
        return response

    return middleware
