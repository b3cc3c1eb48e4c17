"""A webhook as the API takes and shows it: the secret goes in, never out."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import AnyHttpUrl, Field, field_validator

from app.domain.webhooks import Webhook
from app.schemas.common import PRINTABLE_PATTERN, Strict

EventKind = Literal["*", "config", "health", "vantage_health", "vantage"]


def _every_kind() -> list[EventKind]:
    return ["*"]


class WebhookIn(Strict):
    url: AnyHttpUrl = Field(
        description="http or https; fetched from the API host, so it must be "
        "reachable from there (and should not be something only the API host "
        "may reach)",
        examples=["https://ops.example.net/tmdns"],
    )
    events: list[EventKind] = Field(
        default_factory=_every_kind,
        min_length=1,
        max_length=5,
        description='the kinds delivered, or ["*"] for all',
    )
    secret: str = Field(
        min_length=16,
        max_length=256,
        pattern=PRINTABLE_PATTERN,
        description="signs each delivery: X-Tmdns-Signature: sha256=<HMAC-SHA256 "
        "of the body>; never shown again",
    )

    @field_validator("url")
    @classmethod
    def _short(cls, value: AnyHttpUrl) -> AnyHttpUrl:
        if len(str(value)) > 2048:
            raise ValueError("at most 2,048 characters")
        return value

    @field_validator("events")
    @classmethod
    def _distinct(cls, value: list[EventKind]) -> list[EventKind]:
        if len(set(value)) != len(value):
            raise ValueError("each kind at most once")
        return value

    def to_domain(self) -> Webhook:
        return Webhook(0, str(self.url), tuple(self.events), self.secret)


class WebhookOut(Strict):
    id: int
    url: str
    events: list[str]
    created_at: datetime

    @classmethod
    def from_domain(cls, hook: Webhook) -> WebhookOut:
        return cls(
            id=hook.id,
            url=hook.url,
            events=list(hook.events),
            created_at=datetime.fromtimestamp(hook.created_at, UTC),
        )


class DeliveryOut(Strict):
    event_id: int
    kind: str
    attempt: int = Field(description="1 for the first try")
    at: datetime
    status: int = Field(description="the receiver's HTTP status; 0 for none")
    outcome: Literal["delivered", "failed", "dropped"] = Field(
        description="failed: tried again later; dropped: tries used up"
    )
    error: str
