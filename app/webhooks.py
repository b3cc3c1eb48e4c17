"""Webhook deliveries: each receiver gets its events in order as signed JSON
POSTs, retried with backoff; a loop of the API role, beside (never in the
way of) DNS and probing: it only waits on the network and the database.

Each webhook has a cursor in the store (the last event handled) and a lease,
so with several API processes one sends for it at a time and an event is
delivered once; a process that dies leaves the lease to run out. A failing
receiver holds back only its own webhook's later events (order is kept), up
to MAX_ATTEMPTS tries; then the event is logged as dropped and the next one
goes. Redirects are not followed: a webhook URL says where events go.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import time
from collections.abc import Callable

import aiohttp

from app.domain.webhooks import (
    MAX_ATTEMPTS,
    SIGNATURE_HEADER,
    Webhook,
    retry_delay,
    signature,
)
from app.store.base import Delivery, Event, StoreUnavailable, WebhookSender

log = logging.getLogger(__name__)
TICK = 0.25  # how soon a new event leaves
LEASE_SECONDS = 30.0
TIMEOUT_SECONDS = 5.0  # per delivery: a slow receiver costs a retry, not a hang
BATCH = 50


class Deliveries:
    def __init__(
        self, store: WebhookSender, clock: Callable[[], float] = time.time
    ) -> None:
        self._store = store
        self._clock = clock
        self._owner = f"{socket.gethostname()[:40]}:{os.getpid()}"
        self._tries: dict[tuple[int, int], int] = {}  # (webhook, event) → failed
        self._not_before: dict[int, float] = {}  # webhook → next try (backoff)

    async def deliver_forever(self, stop: asyncio.Event) -> None:
        timeout = aiohttp.ClientTimeout(total=TIMEOUT_SECONDS)
        async with aiohttp.ClientSession(timeout=timeout) as http:
            while not stop.is_set():
                with contextlib.suppress(StoreUnavailable):
                    await self.deliver_once(http)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), TICK)

    async def deliver_once(self, http: aiohttp.ClientSession) -> None:
        """One round: every webhook whose backoff is over, at once."""
        now = self._clock()
        due = [
            hook
            for hook in await self._store.list_webhooks()
            if self._not_before.get(hook.id, 0.0) <= now
        ]
        await asyncio.gather(*(self._deliver(http, hook) for hook in due))

    async def _deliver(self, http: aiohttp.ClientSession, hook: Webhook) -> None:
        events = await self._store.events_after(hook.cursor, BATCH)
        if not events:
            return
        if not await self._store.lease_webhook(hook.id, self._owner, LEASE_SECONDS):
            return  # another API process sends for it
        handled = hook.cursor
        for event in events:
            if hook.wants(event.kind) and not await self._send(http, hook, event):
                break
            handled = event.id
        if handled != hook.cursor:
            await self._store.advance_webhook(hook.id, handled)

    async def _send(
        self, http: aiohttp.ClientSession, hook: Webhook, event: Event
    ) -> bool:
        """Deliver one event; False to try it again later."""
        body = json.dumps(event.document(), separators=(",", ":")).encode()
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "tmdns-webhook",
            "X-Tmdns-Event": event.kind,
            "X-Tmdns-Event-Id": str(event.id),
            SIGNATURE_HEADER: signature(hook.secret, body),
        }
        status, error = 0, ""
        try:
            async with http.post(
                hook.url, data=body, headers=headers, allow_redirects=False
            ) as response:
                status = response.status
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            error = str(exc) or type(exc).__name__
        key = (hook.id, event.id)
        attempt = self._tries.get(key, 0) + 1
        if 200 <= status < 300:
            outcome = "delivered"
        elif attempt >= MAX_ATTEMPTS:
            outcome = "dropped"
            log.warning(
                "webhook %d: event %d dropped after %d tries",
                hook.id,
                event.id,
                attempt,
            )
        else:
            outcome = "failed"
            error = error or f"HTTP {status}"
        at = self._clock()
        delivery = Delivery(event.id, event.kind, attempt, at, status, outcome, error)
        await self._store.log_delivery(hook.id, delivery)
        if outcome == "failed":
            self._tries[key] = attempt
            self._not_before[hook.id] = at + retry_delay(attempt)
            return False
        self._tries.pop(key, None)
        self._not_before.pop(hook.id, None)
        return True
