"""/explain: the answer a client would get, and why."""

from __future__ import annotations

import time
from ipaddress import ip_address
from random import Random

from aiohttp import web
from pydantic import Field, field_validator

from app.api.handlers.health import views_for
from app.api.keys import LOCATE, PROBER_SEEN, SNAPSHOT, STORE
from app.domain.explain import Question, explain, explained_endpoints, rtype_of
from app.domain.validation import Invalid
from app.schemas import IP, Strict
from app.schemas.common import dns_name


class ExplainQuery(Strict):
    """?name=app.tm.example&type=A&client=203.0.113.9&prefix=24"""

    name: str = Field(min_length=1, max_length=255)
    type: str = "A"
    client: IP | None = None
    prefix: int | None = Field(default=None, ge=0, le=128)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return dns_name(value)

    @field_validator("type")
    @classmethod
    def _type(cls, value: str) -> str:
        rtype_of(value)  # ValueError in words for an unknown type
        return value


async def explain_answer(request: web.Request) -> web.Response:
    """The client defaults to the caller's own address; `prefix` reads the
    client as an ECS option of that length would carry it."""
    query = ExplainQuery.model_validate(dict(request.query))
    client = query.client or ip_address(request.remote or "127.0.0.1")
    if query.prefix is not None and query.prefix > client.max_prefixlen:
        raise Invalid.one(
            "prefix",
            f"{query.prefix} is longer than the address ({client.max_prefixlen})",
        )
    question = Question(query.name, rtype_of(query.type), client, query.prefix)
    app = request.app
    snapshot, seen = app[SNAPSHOT](), app[PROBER_SEEN]()
    views = await views_for(app[STORE], explained_endpoints(snapshot, query.name))
    body = explain(snapshot, question, time.time(), app[LOCATE], Random(), seen, views)
    return web.json_response(body)
