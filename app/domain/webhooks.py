"""Webhooks: who is told about which events, how a delivery is signed, and
how long a failing receiver is retried. Pure; the sending is app.webhooks."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

EVENT_KINDS = ("config", "health", "vantage_health", "vantage")
ALL_EVENTS = "*"
SIGNATURE_HEADER = "X-Tmdns-Signature"
MAX_ATTEMPTS = 10  # then the event is logged as dropped and the next one goes
RETRY_CAP_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class Webhook:
    id: int
    url: str
    events: tuple[str, ...]  # kinds, or ("*",) for every kind
    secret: str
    created_at: float = 0.0
    cursor: int = 0  # the last event id handled (delivered, dropped or not wanted)

    def wants(self, kind: str) -> bool:
        return ALL_EVENTS in self.events or kind in self.events


def signature(secret: str, body: bytes) -> str:
    """`sha256=` and the HMAC-SHA256 of the body, in hex (as GitHub signs):
    a receiver recomputes it with the shared secret and compares in constant
    time."""
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def retry_delay(attempt: int) -> float:
    """Seconds before the next try after `attempt` failed ones: 0.5 s doubling,
    at most a minute, so ten tries span about four minutes."""
    return min(RETRY_CAP_SECONDS, 0.5 * 2.0 ** (attempt - 1))
