"""/explain: the answer a client would get, and why."""

from __future__ import annotations

import time
from ipaddress import ip_address
from random import Random

from aiohttp import web

from app.api.errors import BadRequest
from app.api.keys import LOCATE, PROBER_SEEN, SNAPSHOT
from app.domain import names
from app.domain.explain import Question, explain, rtype_of


async def explain_answer(request: web.Request) -> web.Response:
    """?name=app.tm.example&type=A&client=203.0.113.9[&prefix=24]; the client
    defaults to the caller's own address."""
    query = request.query
    if not query.get("name"):
        raise BadRequest("the query parameter 'name' is required", 422, "invalid")
    try:
        names.absolute(query["name"])
        rtype = rtype_of(query.get("type", "A"))
        client = ip_address(query.get("client") or request.remote or "127.0.0.1")
        prefix = int(query["prefix"]) if "prefix" in query else None
        if prefix is not None and not 0 <= prefix <= client.max_prefixlen:
            raise ValueError(
                f"prefix {prefix} is not between 0 and {client.max_prefixlen}"
            )
    except ValueError as exc:
        raise BadRequest(str(exc), 422, "invalid") from exc
    question = Question(query["name"], rtype, client, prefix)
    app = request.app
    snapshot, seen = app[SNAPSHOT](), app[PROBER_SEEN]()
    body = explain(snapshot, question, time.time(), app[LOCATE], Random(), seen)
    return web.json_response(body)
