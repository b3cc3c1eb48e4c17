"""The pydantic models as components.schemas, and their JSON merge-patch forms."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, models_json_schema
from pydantic_core import core_schema

from app.api.openapi.refs import SCHEMAS, Schema, name_of
from app.api.openapi.responses import (
    AuditEntry,
    Error,
    Explanation,
    Healthz,
    ProfileHealth,
    ProfileTraffic,
    Vantage,
    Whoami,
)
from app.schemas import (
    EndpointIn,
    EndpointOut,
    LatencyIn,
    ProfileIn,
    ProfileOut,
    ZoneIn,
    ZoneOut,
)
from app.schemas.rrsets import RRsetIn, RRsetOut
from app.schemas.webhooks import DeliveryOut, WebhookIn, WebhookOut


class _Generator(GenerateJsonSchema):
    """Responses are dumped without exclusions, so every field is always there."""

    def field_is_required(
        self,
        field: core_schema.ModelField
        | core_schema.DataclassField
        | core_schema.TypedDictField,
        total: bool,
    ) -> bool:
        return self.mode == "serialization" or super().field_is_required(field, total)


Key = tuple[type[BaseModel], JsonSchemaMode]
BODIES: tuple[type[BaseModel], ...] = (
    ZoneIn,
    ProfileIn,
    EndpointIn,
    LatencyIn,
    WebhookIn,
    RRsetIn,
)
RESULTS: tuple[type[BaseModel], ...] = (
    ZoneOut,
    ProfileOut,
    EndpointOut,
    LatencyIn,
    ProfileHealth,
    ProfileTraffic,
    Whoami,
    Explanation,
    Vantage,
    WebhookOut,
    DeliveryOut,
    RRsetOut,
    AuditEntry,
    Healthz,
    Error,
)


def pydantic_schemas() -> tuple[dict[Key, str], dict[str, Schema]]:
    """Each model's component ref, and every component (refs already pointing
    into components.schemas; any nested $defs hoisted there too)."""
    wanted: list[Key] = [(m, "validation") for m in BODIES]
    wanted += [(m, "serialization") for m in RESULTS]
    refs, top = models_json_schema(
        wanted, ref_template=SCHEMAS + "{model}", schema_generator=_Generator
    )
    schemas: dict[str, Schema] = {}
    for name, schema in top.get("$defs", {}).items():
        _hoist(name, schema, schemas)
    return {key: refs[key]["$ref"] for key in wanted}, schemas


def _hoist(name: str, schema: Schema, schemas: dict[str, Schema]) -> None:
    schemas[name] = _without_defs(schema, schemas)


def _without_defs(value: Any, schemas: dict[str, Schema]) -> Any:
    """A copy with "#/$defs/X" refs pointing into components, $defs moved there."""
    if isinstance(value, list):
        return [_without_defs(v, schemas) for v in value]
    if not isinstance(value, dict):
        return value
    out: Schema = {}
    for key, item in value.items():
        if key == "$defs":
            for name, schema in item.items():
                _hoist(name, schema, schemas)
        elif key == "$ref" and item.startswith("#/$defs/"):
            out[key] = SCHEMAS + item.removeprefix("#/$defs/")
        else:
            out[key] = _without_defs(item, schemas)
    return out


def _nullable(schema: Schema) -> Schema:
    """`schema` or null, with its annotations kept outside the union."""
    branches = schema.get("anyOf", [])
    if schema.get("type") == "null" or {"type": "null"} in branches:
        return schema
    meta = {k: v for k, v in schema.items() if k in ("title", "description")}
    rest = {k: v for k, v in schema.items() if k not in meta}
    return {**meta, "anyOf": [rest, {"type": "null"}]}


def _patch_of(name: str, schemas: dict[str, Schema]) -> str:
    """The merge-patch form of object component `name`, as a component too."""
    patch = name.removesuffix("-Input").removesuffix("In") + "Patch"
    if patch not in schemas:
        source = schemas[name]
        schemas[patch] = {}  # taken, in case the schema refers to itself
        schemas[patch] = {
            "title": patch,
            "description": f"A JSON merge patch (RFC 7396) of {name}: a member left "
            "out is kept, null removes it, an object merges into the current one, "
            "anything else (arrays too) replaces it. The result must be a valid "
            f"{name}.",
            "type": "object",
            "properties": {
                key: _patch_member(value, schemas)
                for key, value in source.get("properties", {}).items()
            },
        }
        if "additionalProperties" in source:
            schemas[patch]["additionalProperties"] = source["additionalProperties"]
    return SCHEMAS + patch


def _patch_member(schema: Schema, schemas: dict[str, Schema]) -> Schema:
    """A member of a merge patch: never required, nullable, without a default
    (leaving it out keeps the current value), objects patched in turn."""
    return _nullable(
        _patched({k: v for k, v in schema.items() if k != "default"}, schemas)
    )


def _patched(schema: Schema, schemas: dict[str, Schema]) -> Schema:
    out = dict(schema)
    if "$ref" in out and schemas[name_of(out["$ref"])].get("type") == "object":
        out["$ref"] = _patch_of(name_of(out["$ref"]), schemas)
    elif "anyOf" in out:
        out["anyOf"] = [_patched(branch, schemas) for branch in out["anyOf"]]
    elif out.get("type") == "object" and isinstance(
        out.get("additionalProperties"), dict
    ):
        out["additionalProperties"] = _nullable(out["additionalProperties"])
    return out


class Refs:
    """Component refs of the request and response schemas, by resource kind."""

    def __init__(self, models: dict[Key, str], schemas: dict[str, Schema]) -> None:
        self.models, self.schemas = models, schemas

    def of(self, model: type[BaseModel], mode: JsonSchemaMode) -> Schema:
        return {"$ref": self.models[(model, mode)]}

    def body(self, kind: str) -> Schema:
        return self.of(_INPUTS[kind], "validation")

    def result(self, kind: str) -> Schema:
        return self.of(_OUTPUTS[kind], "serialization")

    def patch(self, kind: str) -> Schema:
        return {"$ref": _patch_of(name_of(self.body(kind)["$ref"]), self.schemas)}


_INPUTS: dict[str, type[BaseModel]] = {
    "Zone": ZoneIn,
    "Profile": ProfileIn,
    "Endpoint": EndpointIn,
}
_OUTPUTS: dict[str, type[BaseModel]] = {
    "Zone": ZoneOut,
    "Profile": ProfileOut,
    "Endpoint": EndpointOut,
}
