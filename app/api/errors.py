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
        allow = {"Allow": exc.headers["Allow"]} if "Allow" in exc.headers else None
        return problem(
            exc.status, exc.reason.lower().replace(" ", "_"), exc.reason, headers=allow
        )
    except ConnectionResetError:
        raise  # the client went away mid-request: nobody to answer
    except Exception:
        log.exception("unhandled error on %s %s", request.method, request.path)
        return problem(500, "internal", "internal error")


MAX_JSON_DEPTH = 32  # the deepest document the API takes has depth 5


async def json_object(request: web.Request) -> dict[str, Any]:
    """The body as a JSON object, or a 400/415 naming what is wrong with it.

    JSON is taken with any JSON media type or none at all (`curl -d` without
    a header would say form data, which gets a hint); NaN and Infinity are
    not JSON, and a document nested deeper than any the API takes is refused
    before anything walks it."""
    kind = request.content_type if "Content-Type" in request.headers else ""
    if kind not in ("", "application/octet-stream") and not _is_json(kind):
        raise BadRequest(
            f"the body must be JSON, not {kind}: send 'Content-Type: application/json'",
            415,
            "unsupported_media_type",
        )
    raw = await request.read()
    try:
        body = json.loads(raw or b"null", parse_constant=_not_json)
    except ValueError as exc:  # not UTF-8, not JSON, or NaN/Infinity
        raise BadRequest(f"the body is not valid JSON: {exc}", 400, "bad_json") from exc
    except RecursionError:
        raise BadRequest(_TOO_DEEP, 400, "bad_json") from None
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object", 400, "bad_json")
    if _depth(body) > MAX_JSON_DEPTH:
        raise BadRequest(_TOO_DEEP, 400, "bad_json")
    return body


_TOO_DEEP = f"the body is nested more than {MAX_JSON_DEPTH} levels deep"


def _is_json(kind: str) -> bool:
    return kind.endswith("/json") or kind.endswith("+json")


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON number")


def _depth(value: Any) -> int:
    """How deeply arrays and objects nest, without recursion."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, depth = todo.pop()
        children = (
            item.values()
            if isinstance(item, dict)
            else item
            if isinstance(item, list)
            else ()
        )
        for child in children:
            if isinstance(child, dict | list):
                if depth + 1 > MAX_JSON_DEPTH:
                    return depth + 1
                todo.append((child, depth + 1))
        deepest = max(deepest, depth)
    return deepest
