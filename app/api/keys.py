"""Typed application keys shared by the API modules."""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web

from app.api.limiter import FailureLimiter
from app.domain.query import Locate
from app.domain.snapshot import Snapshot
from app.domain.tokens import Token
from app.freshness import Vitals
from app.metrics import Metrics
from app.store.base import AdminStore

STORE = web.AppKey("store", AdminStore)
SNAPSHOT = web.AppKey[Callable[[], Snapshot]]("snapshot")
TOKENS = web.AppKey[tuple[Token, ...]]("tokens")
LOCATE = web.AppKey[Locate]("locate")
METRICS = web.AppKey("metrics", Metrics)
PROBER_SEEN = web.AppKey[Callable[[], float | None]]("prober_seen")
LIMITER = web.AppKey("limiter", FailureLimiter)
VITALS = web.AppKey("vitals", Vitals)
ACTOR = web.RequestKey("actor", str)  # the name of the token that authenticated
