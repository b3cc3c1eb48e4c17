"""The status listener: /healthz and /metrics alone, for every role.

A DNS-only or prober-only process has no API, yet a load balancer, an anycast
health check and Prometheus need to ask it how it is (`--metrics HOST:PORT`).
No token: these two paths say nothing a scraper should not see.
"""

from __future__ import annotations

from aiohttp import web

from app.api.handlers import meta
from app.api.keys import METRICS, VITALS
from app.freshness import Vitals
from app.metrics import Metrics


def create_status_app(vitals: Vitals, metrics: Metrics) -> web.Application:
    app = web.Application()
    app[VITALS] = vitals
    app[METRICS] = metrics
    app.add_routes(
        [web.get("/healthz", meta.healthz), web.get("/metrics", meta.metrics)]
    )
    return app
