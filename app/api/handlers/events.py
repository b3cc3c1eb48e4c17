"""/events: what happens, as server-sent events, resumable by Last-Event-ID.

The events are rows the changes themselves wrote (app.store.events), so every
API process streams the same ones in the same order, whichever process made
them. A stream starts at the newest event unless the client names the last
one it saw; one older than the backlog first gets a `gap` event saying where
the stream resumes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

from aiohttp import web

from app.api.keys import STOPPING, STORE
from app.domain.validation import Invalid
from app.store.base import StoreUnavailable

POLL_SECONDS = 0.25  # how soon a new event is on the stream
KEEPALIVE_SECONDS = 15.0  # a comment line, so proxies keep the connection
RETRY_MS = 2000  # the client's reconnection delay (the SSE `retry` field)


def frame(kind: str, data: dict[str, Any], event_id: int | None = None) -> bytes:
    lines = [] if event_id is None else [f"id: {event_id}"]
    lines += [f"event: {kind}", "data: " + json.dumps(data, separators=(",", ":"))]
    return ("\n".join(lines) + "\n\n").encode()


def _last_seen(request: web.Request) -> int | None:
    text = request.headers.get("Last-Event-ID") or request.query.get("last_event_id")
    if text is None:
        return None
    if not text.isdigit():
        raise Invalid.one("Last-Event-ID", f"{text!r} is not an event id")
    return int(text)


async def stream_events(request: web.Request) -> web.StreamResponse:
    store, stopping = request.app[STORE], request.app[STOPPING]
    last = _last_seen(request)
    oldest, newest = await store.event_bounds()
    response = web.StreamResponse(
        headers={
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-cache",
            "X-Accel-Buffering": "no",
        }
    )
    await response.prepare(request)
    await response.write(f"retry: {RETRY_MS}\n\n".encode())
    if last is None:
        last = newest
    elif oldest and last < oldest - 1:
        await response.write(frame("gap", {"after": last, "resumes_at": oldest}))
        last = oldest - 1
    quiet_since = time.monotonic()
    with contextlib.suppress(ConnectionResetError):
        while not stopping.is_set():
            try:
                events = await store.events_after(last)
            except StoreUnavailable:
                events = []  # the stream waits for the database with the rest
            for e in events:
                await response.write(frame(e.kind, e.document(), e.id))
                last = e.id
            if events:
                quiet_since = time.monotonic()
                continue
            if time.monotonic() - quiet_since >= KEEPALIVE_SECONDS:
                await response.write(b": keepalive\n\n")
                quiet_since = time.monotonic()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stopping.wait(), POLL_SECONDS)
    return response
