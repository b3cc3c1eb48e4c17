"""The HTTP listener of the API and status apps: aiohttp's, with the JSON error
envelope also for requests it cannot even parse.

aiohttp answers a request whose header cannot be read (a folded line, a
control character in a value) before any middleware runs, in plain text.
Its own request handler is kept; only that answer is given the envelope
every other error has.
"""

from __future__ import annotations

import logging

from aiohttp import web
from aiohttp.web_request import BaseRequest

from app.api.errors import problem

log = logging.getLogger(__name__)


class _EnvelopeHandler(web.RequestHandler):
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
    def __call__(self) -> web.RequestHandler:
        return _EnvelopeHandler(self, loop=self._loop, **self._kwargs)


class EnvelopeRunner(web.AppRunner):
    """web.AppRunner whose connections answer unreadable requests with the
    JSON envelope."""

    async def _make_server(self) -> web.Server:
        made = await super()._make_server()
        return _EnvelopeServer(
            made.request_handler,
            request_factory=made.request_factory,
            handler_cancellation=made.handler_cancellation,
            loop=made._loop,
            **made._kwargs,
        )
