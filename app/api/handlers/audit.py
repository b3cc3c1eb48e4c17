"""/audit: every change, who made it, before and after."""

from __future__ import annotations

from datetime import UTC, datetime

from aiohttp import web
from pydantic import Field, field_validator

from app.api.keys import STORE
from app.domain import names
from app.schemas import Strict
from app.store.base import AuditQuery


class AuditFilter(Strict):
    """?resource=tm.example./app&actor=ci&since=2026-11-30T00:00:00Z&limit=50"""

    resource: str | None = Field(default=None, max_length=255)
    actor: str | None = Field(default=None, max_length=255)
    since: datetime | None = None
    until: datetime | None = None
    limit: int = Field(default=100, ge=1, le=1000)

    @field_validator("since", "until", mode="before")
    @classmethod
    def _iso(cls, value: object) -> object:
        """ISO 8601 text only, as documented (not a bare number of seconds)."""
        if isinstance(value, str):
            try:
                return datetime.fromisoformat(value)
            except ValueError:
                raise ValueError(
                    f"{value!r} is not an ISO 8601 time, e.g. 2026-11-01T00:00:00Z"
                ) from None
        return value

    @field_validator("resource")
    @classmethod
    def _canonical(cls, value: str | None) -> str | None:
        """Names as stored: `tm.example.com/sip` finds `tm.example.com./sip`."""
        if value is None or value == "latency":
            return value
        zone, slash, rest = value.partition("/")
        try:
            return names.absolute(zone) + slash + rest.strip().lower()
        except names.BadName as exc:
            raise ValueError(str(exc)) from exc


async def list_audit(request: web.Request) -> web.Response:
    f = AuditFilter.model_validate(dict(request.query))
    entries = await request.app[STORE].audit_log(
        AuditQuery(
            resource=f.resource,
            actor=f.actor,
            limit=f.limit,
            since=f.since.timestamp() if f.since else None,
            until=f.until.timestamp() if f.until else None,
        )
    )
    return web.json_response(
        [
            {
                "id": e.id,
                "at": datetime.fromtimestamp(e.at, UTC).isoformat(),
                "actor": e.actor,
                "action": e.action,
                "resource": e.resource,
                "before": e.before,
                "after": e.after,
            }
            for e in entries
        ]
    )
