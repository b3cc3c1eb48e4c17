"""Optimistic concurrency: an ETag per resource, checked against If-Match.

The tag is a hash of the resource's configuration document (not of runtime
state such as health), so it changes exactly when someone edits it. The
If-Match check runs inside the store transaction that applies the change, so
of two concurrent edits made from the same version exactly one wins.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from aiohttp import web

from app.api.errors import BadRequest


def etag_of(document: dict[str, Any]) -> str:
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return '"' + hashlib.sha256(canonical.encode()).hexdigest()[:32] + '"'


def require_match(request: web.Request, document: dict[str, Any]) -> None:
    """412 if the client's If-Match names another version; no header: no check."""
    wanted = request.headers.get("If-Match")
    if wanted is None:
        return
    tags = {t.strip().removeprefix("W/") for t in wanted.split(",")}
    if "*" not in tags and etag_of(document) not in tags:
        raise BadRequest(
            "the resource changed since you read it (If-Match does not match its ETag)",
            412,
            "precondition_failed",
        )


def with_etag(response: web.Response, document: dict[str, Any]) -> web.Response:
    response.headers["ETag"] = etag_of(document)
    return response
