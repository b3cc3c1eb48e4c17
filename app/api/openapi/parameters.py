"""The shared path, query and header parameter components of the operations."""

from __future__ import annotations

from typing import Any

from app.api.openapi.refs import Schema
from app.domain.model import HealthState
from app.schemas.common import IP_SCHEMA, NAME_PATTERN


def _path_param(name: str, description: str) -> Schema:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "description": description,
        "schema": {"type": "string"},
    }


def _query(name: str, schema: Schema, description: str, **more: Any) -> Schema:
    return {
        "name": name,
        "in": "query",
        "description": description,
        "schema": schema,
        **more,
    }


def parameters() -> dict[str, Schema]:
    return (
        _resource_parameters()
        | _explain_parameters()
        | _audit_parameters()
        | _event_parameters()
        | {
            "minutes": _query(
                "minutes",
                {"type": "integer", "minimum": 1, "maximum": 1440, "default": 60},
                "How many minutes back, the current one included (a day is kept)",
            )
        }
    )


def _event_parameters() -> dict[str, Schema]:
    resume = "Resume after this event id (the last one the client saw)"
    digits = {"type": "string", "pattern": "^[0-9]+$"}
    return {
        "Last-Event-ID": {
            "name": "Last-Event-ID",
            "in": "header",
            "description": resume,
            "schema": digits,
        },
        "last_event_id": _query("last_event_id", digits, resume),
    }


def _resource_parameters() -> dict[str, Schema]:
    """Naming a zone, profile or endpoint; If-Match; the endpoint list's filters."""
    states = [s.value for s in HealthState]
    return {
        "zone": _path_param(
            "zone", "The zone's name, with or without the trailing dot, any case"
        ),
        "profile": _path_param(
            "profile", "The profile's name in the zone (`@` for the apex)"
        ),
        "endpoint": _path_param("endpoint", "The endpoint's name (one label)"),
        "webhook": _path_param("webhook", "The webhook's id"),
        "rrsetName": _path_param(
            "name",
            "The rrset's name: relative to the zone, absolute inside it, or `@`",
        ),
        "rrsetType": _path_param(
            "type", "The record type: A, AAAA, CAA, CNAME, MX, NAPTR, NS, PTR, SRV, TXT"
        ),
        "If-Match": {
            "name": "If-Match",
            "in": "header",
            "description": "Change only if the resource's ETag is still this one; "
            "412 otherwise.",
            "schema": {"type": "string"},
        },
        "If-None-Match": {
            "name": "If-None-Match",
            "in": "header",
            "description": "`*`: create only; 412 if it exists.",
            "schema": {"type": "string", "enum": ["*"]},
        },
        "limit": _query(
            "limit", {"type": "integer", "minimum": 1, "maximum": 1000}, "Page size"
        ),
        "offset": _query(
            "offset", {"type": "integer", "minimum": 0}, "Matches to skip"
        ),
        "state": _query(
            "state", {"type": "string", "enum": states}, "Only endpoints in this state"
        ),
        "enabled": _query(
            "enabled",
            {"type": "string", "enum": ["true", "false"]},
            "Only enabled (`true`) or disabled (`false`) endpoints",
        ),
    }


def _explain_parameters() -> dict[str, Schema]:
    return {
        "name": _query(
            "name",
            {"type": "string", "pattern": NAME_PATTERN, "maxLength": 254},
            "The name asked",
            required=True,
            example="app.tm.example",
        ),
        "type": _query(
            "type",
            {"type": "string", "pattern": "^[A-Za-z0-9]{1,10}$", "default": "A"},
            "The record type asked: a name (`A`, `AAAA`, `SRV`…) or a number",
        ),
        "client": _query(
            "client",
            IP_SCHEMA,
            "The client's address; by default the caller's own",
        ),
        "prefix": _query(
            "prefix",
            {"type": "integer", "minimum": 0, "maximum": 128},
            "Ask as an EDNS Client Subnet of this source prefix",
        ),
    }


def _audit_parameters() -> dict[str, Schema]:
    return {
        "resource": _query(
            "resource",
            {"type": "string"},
            "Only resources starting with this (`tm.example./` for a whole zone)",
        ),
        "actor": _query("actor", {"type": "string"}, "Only changes by this token"),
        "since": _query(
            "since",
            {"type": "string", "format": "date-time"},
            "Only changes at or after this time (ISO 8601)",
        ),
        "until": _query(
            "until",
            {"type": "string", "format": "date-time"},
            "Only changes at or before this time (ISO 8601)",
        ),
        "audit_limit": _query(
            "limit",
            {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100},
            "At most this many entries",
        ),
    }
