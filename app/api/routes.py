"""Every URL of the API in one table."""

from __future__ import annotations

from aiohttp import web

from app.api.handlers import (
    audit,
    dashboard,
    docs,
    endpoints,
    events,
    explain,
    health,
    latency,
    meta,
    profiles,
    rrsets,
    traffic,
    webhooks,
    whoami,
    zones,
)

PREFIX = "/api/v1"
ZONE = PREFIX + "/zones/{zone}"
PROFILE = ZONE + "/profiles/{profile}"
ENDPOINT = PROFILE + "/endpoints/{endpoint}"
WEBHOOK = PREFIX + "/webhooks/{webhook}"
RRSET = ZONE + "/rrsets/{name}/{type}"

# The dashboard (app/api/dashboard/): a page and its files, not API operations,
# so the OpenAPI document leaves them out (tests/unit/test_openapi.py).
PAGES = [
    web.get("/", dashboard.index),
    web.get("/ui/{file}", dashboard.asset),
]

ROUTES = [
    *PAGES,
    web.get("/healthz", meta.healthz),
    web.get("/metrics", meta.metrics),
    web.get(PREFIX + "/openapi.json", docs.openapi_json),
    web.get(PREFIX + "/docs", docs.docs_page),
    web.get(PREFIX + "/whoami", whoami.whoami),
    web.get(PREFIX + "/explain", explain.explain_answer),
    web.get(PREFIX + "/audit", audit.list_audit),
    web.get(PREFIX + "/vantages", health.list_vantages),
    web.get(PREFIX + "/events", events.stream_events),
    web.get(PREFIX + "/webhooks", webhooks.list_webhooks),
    web.post(PREFIX + "/webhooks", webhooks.create_webhook),
    web.get(WEBHOOK, webhooks.get_webhook),
    web.delete(WEBHOOK, webhooks.delete_webhook),
    web.get(WEBHOOK + "/deliveries", webhooks.list_deliveries),
    web.get(PREFIX + "/latency", latency.get_latency),
    web.put(PREFIX + "/latency", latency.put_latency),
    web.get(PREFIX + "/zones", zones.list_zones),
    web.post(PREFIX + "/zones", zones.create_zone),
    web.get(ZONE, zones.get_zone),
    web.patch(ZONE, zones.patch_zone),
    web.delete(ZONE, zones.delete_zone),
    web.get(ZONE + "/rrsets", rrsets.list_rrsets),
    web.get(RRSET, rrsets.get_rrset),
    web.put(RRSET, rrsets.put_rrset),
    web.delete(RRSET, rrsets.delete_rrset),
    web.get(ZONE + "/profiles", profiles.list_profiles),
    web.post(ZONE + "/profiles", profiles.create_profile),
    web.get(PROFILE, profiles.get_profile),
    web.patch(PROFILE, profiles.patch_profile),
    web.delete(PROFILE, profiles.delete_profile),
    web.get(PROFILE + "/health", health.profile_health),
    web.get(PROFILE + "/traffic", traffic.profile_traffic),
    web.get(PROFILE + "/endpoints", endpoints.list_endpoints),
    web.post(PROFILE + "/endpoints", endpoints.create_endpoint),
    web.get(ENDPOINT, endpoints.get_endpoint),
    web.patch(ENDPOINT, endpoints.patch_endpoint),
    web.delete(ENDPOINT, endpoints.delete_endpoint),
]
