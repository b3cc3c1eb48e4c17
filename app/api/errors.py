"""One error envelope for every failure: {"error": {code, message, details}}."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from pydantic import ValidationError

from app.domain.validation import Invalid
from app.store.base import Conflict, NotFound, StoreUnavailable

log = logging.getLogger(__name__)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class BadRequest(Exception):
    """The request itself is unusable (malformed JSON, wrong body shape)."""

    def __init__(
        self, message: str, status: int = 400, code: str = "bad_request"
    ) -> None:
        super().__init__(message)
        self.status, self.code = status, code


# Long enough for a restarting PostgreSQL to accept connections again.
RETRY_AFTER_SECONDS = 2


def problem(
    status: int,
    code: str,
    message: str,
    details: Any = None,
    headers: dict[str, str] | None = None,
) -> web.Response:
    body = {"error": {"code": code, "message": message, "details": details or []}}
    return web.json_response(body, status=status, headers=headers)


def field_errors(exc: ValidationError) -> list[dict[str, str]]:
    """Pydantic errors as [{field, message}], the field as a dotted body path."""
    return [
        {"field": ".".join(str(p) for p in e["loc"]), "message": e["msg"]}
        for e in exc.errors(include_url=False)
    ]


@web.middleware
async def error_envelope(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except ValidationError as exc:
        details = field_errors(exc)
        first = details[0]
        where = f"{first['field']}: " if first["field"] else ""
        return problem(422, "invalid", where + first["message"], details)
    except Invalid as exc:
        details = [{"field": p.field, "message": p.message} for p in exc.problems]
        return problem(422, "invalid", str(exc), details)
    except BadRequest as exc:
        return problem(exc.status, exc.code, str(exc))
    except NotFound as exc:
        return problem(404, "not_found", str(exc))
    except Conflict as exc:
        return problem(
            409, "conflict", str(exc), [{"field": exc.field, "message": str(exc)}]
        )
    except StoreUnavailable as exc:
        return problem(
            503,
            "store_unavailable",
            f"the database is unreachable ({exc}); retry later",
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        )
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return problem(exc.status, exc.reason.lower().replace(" ", "_"), exc.reason)
    except ConnectionResetError:
        raise  # the client went away mid-request: nobody to answer
    except Exception:
        log.exception("unhandled error on %s %s", request.method, request.path)
        return problem(500, "internal", "internal error")


async def json_object(request: web.Request) -> dict[str, Any]:
    """The body as a JSON object, or a 400/415 naming what is wrong with it."""
    if request.content_type not in ("application/json", "application/octet-stream", ""):
        raise BadRequest(
            "the body must be application/json", 415, "unsupported_media_type"
        )
    try:
        body = json.loads(await request.read() or b"null")
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadRequest(f"the body is not valid JSON: {exc}", 400, "bad_json") from exc
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object", 400, "bad_json")
    return body
