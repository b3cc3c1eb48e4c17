"""Typed application keys shared by the API modules."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from ipaddress import IPv4Network, IPv6Network

from aiohttp import web

from app.api.limiter import FailureLimiter
from app.domain.query import Locate
from app.domain.snapshot import Snapshot
from app.domain.tokens import Scope, Token
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
# Set when the API shuts down: long-lived streams end then, not at a timeout.
STOPPING = web.AppKey("stopping", asyncio.Event)
IPNetwork = IPv4Network | IPv6Network
# TMDNS_API__WEBHOOK_NETWORKS: where webhooks may point (empty: anywhere).
WEBHOOK_NETWORKS = web.AppKey[tuple[IPNetwork, ...]]("webhook_networks")
ACTOR = web.RequestKey("actor", str)  # the name of the token that authenticated
SCOPE = web.RequestKey("scope", Scope)  # and what it may do
