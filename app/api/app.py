"""create_app: the aiohttp application over a store and the live snapshot."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from aiohttp import web

from app.api.auth import bearer_auth
from app.api.bodies import body_within
from app.api.errors import error_envelope
from app.api.handlers.docs import OPENAPI
from app.api.keys import (
    LIMITER,
    LOCATE,
    METRICS,
    PROBER_SEEN,
    SNAPSHOT,
    STOPPING,
    STORE,
    TOKENS,
    VITALS,
    WEBHOOK_NETWORKS,
    IPNetwork,
)
from app.api.limiter import FailureLimiter
from app.api.openapi import openapi_document
from app.api.routes import ROUTES
from app.api.stamps import cors, generation_stamp
from app.domain.query import Locate
from app.domain.snapshot import Snapshot
from app.domain.tokens import Token
from app.freshness import Vitals
from app.metrics import Metrics
from app.store.base import AdminStore

MAX_BODY_BYTES = 1 << 20


def create_app(
    store: AdminStore,
    current_snapshot: Callable[[], Snapshot],
    tokens: Sequence[Token],
    locate: Locate,
    metrics: Metrics,
    vitals: Vitals,
    cors_origins: Sequence[str] = (),
    read_timeout: float = 10.0,
    webhook_networks: Sequence[IPNetwork] = (),
) -> web.Application:
    # The envelope wraps authentication, so a 401 has the same shape as a 422.
    app = web.Application(
        middlewares=[
            error_envelope,
            cors(cors_origins),
            body_within(read_timeout),
            bearer_auth,
            generation_stamp,
        ],
        client_max_size=MAX_BODY_BYTES,
    )
    app[STORE] = store
    app[SNAPSHOT] = current_snapshot
    app[TOKENS] = tuple(tokens)
    app[LOCATE] = locate
    app[METRICS] = metrics
    app[VITALS] = vitals
    app[PROBER_SEEN] = lambda: vitals.freshness.prober_seen_at
    app[LIMITER] = FailureLimiter()
    app[OPENAPI] = openapi_document()
    app[STOPPING] = asyncio.Event()
    app[WEBHOOK_NETWORKS] = tuple(webhook_networks)
    app.on_shutdown.append(_stop_streams)
    app.add_routes(ROUTES)
    return app


async def _stop_streams(app: web.Application) -> None:
    app[STOPPING].set()
