"""Webhook rules: which events a webhook wants, the signature a receiver
checks, and the retry schedule."""

from __future__ import annotations

import hashlib
import hmac

from app.domain.webhooks import MAX_ATTEMPTS, Webhook, retry_delay, signature


def test_a_webhook_wants_its_kinds_or_everything() -> None:
    some = Webhook(1, "http://127.0.0.1/hook", ("health",), "s" * 16)
    every = Webhook(2, "http://127.0.0.1/hook", ("*",), "s" * 16)
    assert some.wants("health") and not some.wants("config")
    assert every.wants("config") and every.wants("vantage")


def test_the_signature_is_the_hmac_sha256_of_the_body_as_a_receiver_computes_it() -> (
    None
):
    body = b'{"id":1,"kind":"health"}'
    expected = hmac.new(b"a-shared-secret!", body, hashlib.sha256).hexdigest()
    assert signature("a-shared-secret!", body) == f"sha256={expected}"
    assert signature("another-secret!!", body) != signature("a-shared-secret!", body)


def test_retries_back_off_to_a_minute_and_span_minutes_not_hours() -> None:
    delays = [retry_delay(n) for n in range(1, MAX_ATTEMPTS)]
    assert delays[:4] == [0.5, 1.0, 2.0, 4.0]
    assert max(delays) == 60.0
    assert 120 < sum(delays) < 300
