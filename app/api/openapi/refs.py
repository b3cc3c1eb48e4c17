"""JSON pointers into the document's components, and the small shapes around them."""

from __future__ import annotations

from typing import Any

JSON = "application/json"
SCHEMAS = "#/components/schemas/"
Schema = dict[str, Any]


def ref(name: str) -> Schema:
    return {"$ref": SCHEMAS + name}


def name_of(ref: str) -> str:
    return ref.removeprefix(SCHEMAS)


def param(name: str) -> Schema:
    return {"$ref": "#/components/parameters/" + name}


def header(name: str) -> Schema:
    return {"$ref": "#/components/headers/" + name}


def json_content(schema: Schema) -> Schema:
    return {JSON: {"schema": schema}}


def many(schema: Schema) -> Schema:
    return {"type": "array", "items": schema}
