"""The HTTP listener of the API and status apps: aiohttp's, with the JSON error
envelope also for requests it cannot even parse, and limits for slow clients.

aiohttp answers a request whose header cannot be read (a folded line, a
control character in a value) before any middleware runs, in plain text.
Its own request handler is kept; only that answer is given the envelope
every other error has.

Slow clients: a connection must complete its first request's header within
`read_timeout` (a partial header is closed, not kept, so a few thousand
half-open connections cannot pin the API), an idle keep-alive connection
(or one sending a later header slowly) is closed after `keepalive_timeout`,
a request body must arrive within `read_timeout` (app.api.app reads it under
that limit), and one client address holds at most `per_client` connections.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from aiohttp.web_request import BaseRequest

from app.api.errors import problem

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class HttpLimits:
    read_timeout: float = 10.0  # a request's header, and its body, by then
    keepalive_timeout: float = 15.0  # an idle connection is closed after
    per_client: int = 32  # connections one client address may hold


class _EnvelopeHandler(web.RequestHandler):
    def __init__(self, server: _EnvelopeServer, **kwargs: Any) -> None:
        super().__init__(server, **kwargs)
        self._limits = server.limits
        self._clients = server.clients
        self._client: str | None = None
        self._header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        peer = transport.get_extra_info("peername")
        host = str(peer[0]) if peer else ""
        if self._clients[host] >= self._limits.per_client:
            log.debug("API connection from %s over its limit: closed", host)
            self.force_close()
            transport.close()
            return
        self._client = host
        self._clients[host] += 1
        self._header_timer = self._loop.call_later(
            self._limits.read_timeout, self._header_overdue
        )

    def _header_overdue(self) -> None:
        """No whole request header since the connection opened: close it."""
        self._header_timer = None
        if self._request_count == 0:
            log.debug("API client %s sent no whole header in time", self._client)
            self.force_close()
            if self.transport is not None:
                self.transport.close()

    def connection_lost(self, exc: BaseException | None) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
        if self._client is not None:
            self._clients[self._client] -= 1
            if not self._clients[self._client]:
                del self._clients[self._client]
            self._client = None
        super().connection_lost(exc)

    def handle_error(
        self,
        request: BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if status >= 500 or request.writer.output_size > 0:
            return super().handle_error(request, status, exc, message)
        reason = getattr(exc, "message", None) or message or "malformed request"
        first = str(reason).strip().splitlines()[0] if str(reason).strip() else ""
        log.debug("unreadable request from %s: %s", request.remote, first)
        response = problem(
            status, "bad_request", f"the request could not be read: {first}"
        )
        response.force_close()
        return response


class _EnvelopeServer(web.Server):
    limits = HttpLimits()
    clients: Counter[str]

    def __call__(self) -> web.RequestHandler:
        return _EnvelopeHandler(self, loop=self._loop, **self._kwargs)


class EnvelopeRunner(web.AppRunner):
    """web.AppRunner whose connections answer unreadable requests with the
    JSON envelope, under the limits for slow clients."""

    def __init__(self, app: web.Application, limits: HttpLimits | None = None) -> None:
        limits = limits or HttpLimits()
        # After an early answer (a 408, a 413), aiohttp reads what is left of
        # the body for `lingering_time` so the client sees the answer: keep it
        # short, or a stalled body holds the connection for 10 s more.
        super().__init__(
            app,
            keepalive_timeout=limits.keepalive_timeout,
            lingering_time=min(2.0, limits.read_timeout),
        )
        self.limits = limits

    async def _make_server(self) -> web.Server:
        made = await super()._make_server()
        server = _EnvelopeServer(
            made.request_handler,
            request_factory=made.request_factory,
            handler_cancellation=made.handler_cancellation,
            loop=made._loop,
            **made._kwargs,
        )
        server.limits = self.limits
        server.clients = Counter()
        return server
