"""/webhooks: receivers of events (app.webhooks delivers), and their log."""

from __future__ import annotations

from datetime import UTC, datetime
from ipaddress import ip_address
from urllib.parse import urlsplit

from aiohttp import web

from app.api.errors import json_object
from app.api.etags import require_match, with_etag
from app.api.keys import ACTOR, STORE, WEBHOOK_NETWORKS
from app.domain.validation import Invalid
from app.domain.webhooks import Webhook
from app.schemas import from_json
from app.schemas.webhooks import DeliveryOut, WebhookIn, WebhookOut


def _document(hook: Webhook) -> dict[str, object]:
    return WebhookOut.from_domain(hook).model_dump(mode="json")


def _webhook_id(request: web.Request) -> int:
    text = request.match_info["webhook"]
    if not text.isdigit() or len(text) > 18:
        raise Invalid.one("webhook", f"{text!r} is not a webhook id")
    return int(text)


async def list_webhooks(request: web.Request) -> web.Response:
    hooks = await request.app[STORE].list_webhooks()
    return web.json_response([_document(h) for h in hooks])


def _allowed(request: web.Request, url: str) -> None:
    """With TMDNS_API__WEBHOOK_NETWORKS set, the URL must name an address in
    one of them: no host name, so nothing is looked up to decide."""
    networks = request.app[WEBHOOK_NETWORKS]
    if not networks:
        return
    host = (urlsplit(url).hostname or "").strip("[]")
    try:
        address = ip_address(host)
    except ValueError:
        address = None
    if address is None or not any(address in n for n in networks):
        allowed = ", ".join(str(n) for n in networks)
        raise Invalid.one("url", f"webhooks may only point to addresses in {allowed}")


async def create_webhook(request: web.Request) -> web.Response:
    body = from_json(WebhookIn, await json_object(request))
    _allowed(request, str(body.url))
    saved = await request.app[STORE].create_webhook(
        body.to_domain(), actor=request[ACTOR]
    )
    document = _document(saved)
    return with_etag(web.json_response(document, status=201), document)


async def get_webhook(request: web.Request) -> web.Response:
    document = _document(await request.app[STORE].get_webhook(_webhook_id(request)))
    return with_etag(web.json_response(document), document)


async def delete_webhook(request: web.Request) -> web.Response:
    await request.app[STORE].delete_webhook(
        _webhook_id(request),
        actor=request[ACTOR],
        guard=lambda current: require_match(request, _document(current)),
    )
    return web.Response(status=204)


async def list_deliveries(request: web.Request) -> web.Response:
    deliveries = await request.app[STORE].webhook_deliveries(_webhook_id(request))
    return web.json_response(
        [
            DeliveryOut(
                event_id=d.event_id,
                kind=d.kind,
                attempt=d.attempt,
                at=datetime.fromtimestamp(d.at, UTC),
                status=d.status,
                outcome=d.outcome,
                error=d.error,
            ).model_dump(mode="json")
            for d in deliveries
        ]
    )
