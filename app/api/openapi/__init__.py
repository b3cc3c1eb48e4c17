"""The OpenAPI 3.1 description of the API, built from the pydantic models.

Request bodies use each model's validation schema, responses its serialization
schema (where every field is required: responses always carry them all), and
every definition pydantic makes lands in components.schemas. PATCH bodies are
derived from the input schemas as RFC 7396 merge patches. Building the document
reads no settings and does no I/O: the same code gives the same document.
"""

from __future__ import annotations

from typing import Any

from app import __version__
from app.api.openapi.operations import paths
from app.api.openapi.parameters import parameters
from app.api.openapi.responses import headers, responses
from app.api.openapi.schemas import Refs, pydantic_schemas

__all__ = ["OPENAPI_VERSION", "openapi_document"]

OPENAPI_VERSION = "3.1.0"
TAGS = ("zones", "profiles", "endpoints", "explain", "latency", "audit", "meta")


def _info() -> dict[str, Any]:
    return {
        "title": "tmdns API",
        "version": __version__,
        "summary": "Authoritative DNS traffic manager",
        "description": "Every call but /healthz, /metrics and the documentation "
        "needs `Authorization: Bearer <token>`; changes need a write token. "
        "Names are accepted with or without the trailing dot and in any case; "
        "responses use the lowercase absolute form. Bodies are JSON objects; "
        "unknown fields are refused.",
        "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
    }


def openapi_document() -> dict[str, Any]:
    """The whole OpenAPI 3.1.0 document of the tmdns API."""
    models, schemas = pydantic_schemas()
    operations = paths(Refs(models, schemas))
    return {
        "openapi": OPENAPI_VERSION,
        "info": _info(),
        "tags": [{"name": name} for name in TAGS],
        "paths": operations,
        "components": {
            "schemas": dict(sorted(schemas.items())),
            "parameters": parameters(),
            "headers": headers(),
            "responses": responses(),
            "securitySchemes": {
                "bearerAuth": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "An API token (`TMDNS_BOOTSTRAP_TOKEN` at start)",
                }
            },
        },
    }
