"""The OpenAPI 3.1 description of the API, built from the pydantic models.

Request bodies use each model's validation schema, responses its serialization
schema (where every field is required: responses always carry them all), and
every definition pydantic makes lands in components.schemas. PATCH bodies are
derived from the input schemas as RFC 7396 merge patches. Building the document
reads no settings and does no I/O: the same code gives the same document.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, models_json_schema
from pydantic_core import core_schema

from app import __version__
from app.domain.model import HealthState
from app.schemas import (
    EndpointIn,
    EndpointOut,
    LatencyIn,
    ProfileIn,
    ProfileOut,
    ZoneIn,
    ZoneOut,
)

OPENAPI_VERSION = "3.1.0"
JSON = "application/json"
SCHEMAS = "#/components/schemas/"
PREFIX = "/api/v1"
ZONE = PREFIX + "/zones/{zone}"
PROFILE = ZONE + "/profiles/{profile}"
ENDPOINT = PROFILE + "/endpoints/{endpoint}"
Schema = dict[str, Any]


# Response shapes that are plain dicts in the handlers, described here only.


class FieldProblem(BaseModel):
    field: str = Field(
        description="a dotted body path (`endpoints.1.weight`), a query parameter "
        "or a header; empty for the body as a whole"
    )
    message: str


class ErrorInfo(BaseModel):
    code: str = Field(
        description="machine-readable: bad_json, unauthorized, forbidden, not_found, "
        "conflict, precondition_failed, unsupported_media_type, invalid, "
        "store_unavailable, …"
    )
    message: str = Field(description="what went wrong, in words")
    details: list[FieldProblem]


class Error(BaseModel):
    """The envelope of every error response."""

    error: ErrorInfo


class EndpointHealth(BaseModel):
    name: str
    state: HealthState | None = Field(description="as DNS answers now")
    since: datetime | None = Field(description="in this state since")
    reason: str | None = Field(
        description="the last verdict in words", examples=["connection refused"]
    )
    latency_ms: float | None
    checked_at: datetime | None = Field(description="time of the last verdict")
    stale: bool = Field(description="the prober has not reported for 3 intervals")


class Transition(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    endpoint: str
    at: datetime
    from_: HealthState = Field(alias="from")
    to: HealthState
    reason: str


class ProfileHealth(BaseModel):
    """Every endpoint's health, and the latest transitions (newest first)."""

    profile: str = Field(description="the profile's absolute name")
    endpoints: list[EndpointHealth]
    transitions: list[Transition] = Field(max_length=50)


class ClientLocation(BaseModel):
    continent: str | None = Field(examples=["EU"])
    country: str | None = Field(examples=["DE"])
    subdivision: str | None = Field(examples=["DE-BY"])
    lat: float | None
    lon: float | None
    network_prefix: int = Field(description="length of the client's GeoIP network")


class RecordText(BaseModel):
    name: str
    type: str = Field(examples=["A"])
    ttl: int
    data: str = Field(description="the record data in presentation format")


class EndpointVerdict(BaseModel):
    name: str
    state: HealthState
    stale: bool


class Explanation(BaseModel):
    """The answer tmdns would give, and why."""

    name: str
    type: str
    client: str | None
    client_location: ClientLocation | None = Field(description="the GeoIP facts")
    rcode: str = Field(examples=["NOERROR"])
    answer: list[RecordText]
    authority: list[RecordText]
    additional: list[RecordText]
    ecs_scope: int = Field(description="the ECS scope prefix of the reply")
    endpoints: list[EndpointVerdict]
    why: list[str] = Field(description="each step of the resolution, in words")
    generation: int = Field(description="the configuration generation answered from")


class AuditEntry(BaseModel):
    """One change, as the audit log keeps it."""

    id: int
    at: datetime = Field(description="when (ISO 8601, UTC)")
    actor: str = Field(description="the name of the token that made the change")
    action: str = Field(examples=["profile.update"])
    resource: str = Field(examples=["tm.example./app"])
    before: Any = Field(description="the resource before the change; null if new")
    after: Any = Field(description="the resource after the change; null if deleted")


class Healthz(BaseModel):
    snapshot_generation: int
    snapshot_age_seconds: float
    prober_last_report_seconds: float | None
    prober: Literal["ok", "stale"]
    database: Literal["ok", "unreachable"]


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
BODIES: tuple[type[BaseModel], ...] = (ZoneIn, ProfileIn, EndpointIn, LatencyIn)
RESULTS: tuple[type[BaseModel], ...] = (
    ZoneOut,
    ProfileOut,
    EndpointOut,
    LatencyIn,
    ProfileHealth,
    Explanation,
    AuditEntry,
    Healthz,
    Error,
)


def _pydantic_schemas() -> tuple[dict[Key, str], dict[str, Schema]]:
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


def _name(ref: str) -> str:
    return ref.removeprefix(SCHEMAS)


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
    if "$ref" in out and schemas[_name(out["$ref"])].get("type") == "object":
        out["$ref"] = _patch_of(_name(out["$ref"]), schemas)
    elif "anyOf" in out:
        out["anyOf"] = [_patched(branch, schemas) for branch in out["anyOf"]]
    elif out.get("type") == "object" and isinstance(
        out.get("additionalProperties"), dict
    ):
        out["additionalProperties"] = _nullable(out["additionalProperties"])
    return out


def _ref(name: str) -> Schema:
    return {"$ref": SCHEMAS + name}


# Operations.


def _param(name: str) -> Schema:
    return {"$ref": "#/components/parameters/" + name}


def _header(name: str) -> Schema:
    return {"$ref": "#/components/headers/" + name}


def _json(schema: Schema) -> Schema:
    return {JSON: {"schema": schema}}


ERRORS = {
    400: ("BadRequest", "The body is not JSON, or not a JSON object (`bad_json`)."),
    401: ("Unauthorized", "No valid bearer token (`unauthorized`)."),
    403: ("Forbidden", "The token may only read (`forbidden`)."),
    404: ("NotFound", "The zone, profile or endpoint does not exist (`not_found`)."),
    409: (
        "Conflict",
        "The change collides with existing data: a duplicate name, or a profile "
        "still used as a nested child (`conflict`).",
    ),
    412: (
        "PreconditionFailed",
        "If-Match does not match the current ETag: the resource changed since it "
        "was read (`precondition_failed`).",
    ),
    413: (
        "PayloadTooLarge",
        "The body is over 1 MiB (`request_entity_too_large`).",
    ),
    415: (
        "UnsupportedMediaType",
        "The body is not `application/json` (`unsupported_media_type`).",
    ),
    422: (
        "Unprocessable",
        "A field or parameter is invalid (`invalid`); `details` names each one by "
        "its path, e.g. `endpoints.1.weight`. A rejected change writes nothing.",
    ),
    503: ("Unavailable", "The database is unreachable (`store_unavailable`)."),
}
READ_ERRORS = (401, 404, 503)
WRITE_ERRORS = (400, 401, 403, 404, 409, 413, 415, 422, 503)


def _op(
    op_id: str,
    summary: str,
    tag: str,
    responses: dict[str, Schema],
    errors: tuple[int, ...] = (),
    description: str = "",
    parameters: tuple[str, ...] = (),
    body: Schema | None = None,
    secured: bool = True,
) -> Schema:
    op: Schema = {"operationId": op_id, "summary": summary, "tags": [tag]}
    if description:
        op["description"] = description
    if parameters:
        op["parameters"] = [_param(p) for p in parameters]
    if body is not None:
        op["requestBody"] = {"required": True, "content": _json(body)}
    for status in sorted(errors):
        responses[str(status)] = {"$ref": "#/components/responses/" + ERRORS[status][0]}
    op["responses"] = responses
    op["security"] = [{"bearerAuth": []}] if secured else []
    return op


def _ok(
    status: int, description: str, schema: Schema | None = None, *headers: str
) -> dict[str, Schema]:
    response: Schema = {"description": description}
    if headers:
        response["headers"] = {h: _header(h) for h in headers}
    if schema is not None:
        response["content"] = _json(schema)
    return {str(status): response}


def _many(schema: Schema) -> Schema:
    return {"type": "array", "items": schema}


def _resource_paths(
    kind: str, collection: str, item: str, parents: tuple[str, ...], refs: Refs
) -> dict[str, Schema]:
    """List, create, read, patch and delete one kind of resource."""
    noun, title = kind.lower(), kind
    a = "an" if noun[0] in "aeiou" else "a"
    body, out = refs.body(title), refs.result(title)
    patch = refs.patch(title)
    list_params = parents
    list_headers: tuple[str, ...] = ()
    list_errors: tuple[int, ...] = READ_ERRORS if parents else (401, 503)
    list_description = ""
    if kind == "Endpoint":
        list_params = (*parents, "limit", "offset", "state", "enabled")
        list_headers = ("X-Total-Count",)
        list_errors = (*READ_ERRORS, 422)
        list_description = "Filtered by `state` and `enabled`, then paged."
    create_errors = tuple(e for e in WRITE_ERRORS if parents or e != 404)
    single = (*parents, noun)
    changed = "X-Tmdns-Generation"
    return {
        collection: {
            "get": _op(
                f"list{title}s",
                f"List {noun}s",
                f"{noun}s",
                _ok(200, f"The {noun}s", _many(out), *list_headers),
                list_errors,
                list_description,
                list_params,
            ),
            "post": _op(
                f"create{title}",
                f"Create {a} {noun}",
                f"{noun}s",
                _ok(201, f"The {noun} created", out, changed),
                create_errors,
                parameters=parents,
                body=body,
            ),
        },
        item: {
            "get": _op(
                f"get{title}",
                f"Read {a} {noun}",
                f"{noun}s",
                _ok(200, f"The {noun}", out, "ETag"),
                READ_ERRORS,
                parameters=single,
            ),
            "patch": _op(
                f"patch{title}",
                f"Change {a} {noun} (JSON merge patch)",
                f"{noun}s",
                _ok(200, f"The {noun} changed", out, changed),
                (*WRITE_ERRORS, 412),
                f"The body is a JSON merge patch (RFC 7396) of {_name(body['$ref'])}, "
                "sent as `application/json`: objects merge, null removes a member.",
                (*single, "If-Match"),
                patch,
            ),
            "delete": _op(
                f"delete{title}",
                f"Delete {a} {noun}",
                f"{noun}s",
                {
                    "204": {
                        "description": "Deleted",
                        "headers": {changed: _header(changed)},
                    }
                },
                (401, 403, 404, 409, 412, 503) + ((422,) if kind == "Endpoint" else ()),
                parameters=(*single, "If-Match"),
            ),
        },
    }


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
        return {"$ref": _patch_of(_name(self.body(kind)["$ref"]), self.schemas)}


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


def _paths(refs: Refs) -> dict[str, Schema]:
    paths: dict[str, Schema] = {}
    paths |= _resource_paths("Zone", PREFIX + "/zones", ZONE, (), refs)
    paths |= _resource_paths("Profile", ZONE + "/profiles", PROFILE, ("zone",), refs)
    paths[PROFILE + "/health"] = {
        "get": _op(
            "getProfileHealth",
            "Health of a profile's endpoints",
            "profiles",
            _ok(200, "States, last verdicts and transitions", _ref("ProfileHealth")),
            READ_ERRORS,
            "Each endpoint's state as DNS answers now, the prober's last verdict "
            "and whether it is stale, and the 50 latest state transitions.",
            ("zone", "profile"),
        )
    }
    parents = ("zone", "profile")
    paths |= _resource_paths(
        "Endpoint", PROFILE + "/endpoints", ENDPOINT, parents, refs
    )
    latency = refs.of(LatencyIn, "serialization")
    paths[PREFIX + "/explain"] = {
        "get": _op(
            "explainAnswer",
            "Explain the answer a client would get",
            "explain",
            _ok(200, "The answer and how it was reached", _ref("Explanation")),
            (401, 422),
            "Runs the same resolution as the DNS server and reports the answer, the "
            "client's GeoIP facts, every endpoint with its state, why skipped ones "
            "were skipped, the rule that matched and the ECS scope.",
            ("name", "type", "client", "prefix"),
        )
    }
    paths[PREFIX + "/latency"] = {
        "get": _op(
            "getLatency",
            "Read the latency table",
            "latency",
            _ok(200, "The latency table", latency),
            (401, 503),
        ),
        "put": _op(
            "putLatency",
            "Replace the latency table",
            "latency",
            _ok(200, "The table now in force", latency, "X-Tmdns-Generation"),
            (400, 401, 403, 413, 415, 422, 503),
            "Performance routing ranks locations by this table when it covers the "
            "client (most specific network wins), else by great-circle distance.",
            body=refs.of(LatencyIn, "validation"),
        ),
    }
    paths[PREFIX + "/audit"] = {
        "get": _op(
            "listAudit",
            "Read the audit log",
            "audit",
            _ok(200, "Changes, newest first", _many(_ref("AuditEntry"))),
            (401, 422, 503),
            parameters=("resource", "actor", "since", "until", "audit_limit"),
        )
    }
    paths[PREFIX + "/openapi.json"] = {
        "get": _op(
            "getOpenapi",
            "This OpenAPI document",
            "meta",
            _ok(200, "The OpenAPI 3.1 document", {"type": "object"}),
            secured=False,
        )
    }
    paths[PREFIX + "/docs"] = {
        "get": _op(
            "getDocs",
            "Browsable API reference",
            "meta",
            {
                "200": {
                    "description": "An HTML page rendering this document",
                    "content": {"text/html": {"schema": {"type": "string"}}},
                }
            },
            secured=False,
        )
    }
    healthz = _ref("Healthz")
    paths["/healthz"] = {
        "get": _op(
            "healthz",
            "Is this instance fit to serve",
            "meta",
            _ok(200, "Healthy", healthz)
            | _ok(503, "The database is unreachable or the prober is silent", healthz),
            description="200 when the database answers and, if anything is probed, "
            "the prober has reported within 3 of the shortest probe interval.",
            secured=False,
        )
    }
    paths["/metrics"] = {
        "get": _op(
            "metrics",
            "Prometheus metrics",
            "meta",
            {
                "200": {
                    "description": "The Prometheus text exposition format",
                    "content": {"text/plain": {"schema": {"type": "string"}}},
                }
            },
            secured=False,
        )
    }
    return paths


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


def _parameters() -> dict[str, Schema]:
    states = [s.value for s in HealthState]
    return {
        "zone": _path_param(
            "zone", "The zone's name, with or without the trailing dot, any case"
        ),
        "profile": _path_param(
            "profile", "The profile's name in the zone (`@` for the apex)"
        ),
        "endpoint": _path_param("endpoint", "The endpoint's name (one label)"),
        "If-Match": {
            "name": "If-Match",
            "in": "header",
            "description": "Change only if the resource's ETag is still this one; "
            "412 otherwise.",
            "schema": {"type": "string"},
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
        "name": _query(
            "name",
            {"type": "string", "minLength": 1},
            "The name asked",
            required=True,
            example="app.tm.example",
        ),
        "type": _query(
            "type",
            {"type": "string", "default": "A"},
            "The record type asked: a name (`A`, `AAAA`, `SRV`…) or a number",
        ),
        "client": _query(
            "client",
            {"type": "string", "format": "ip-address"},
            "The client's address; by default the caller's own",
        ),
        "prefix": _query(
            "prefix",
            {"type": "integer", "minimum": 0, "maximum": 128},
            "Ask as an EDNS Client Subnet of this source prefix",
        ),
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


def _headers() -> dict[str, Schema]:
    return {
        "ETag": {
            "description": "The resource's version, for If-Match",
            "schema": {"type": "string"},
        },
        "X-Tmdns-Generation": {
            "description": "The configuration generation holding the change (also "
            "the SOA serial)",
            "schema": {"type": "integer"},
        },
        "X-Total-Count": {
            "description": "How many match the filters, before limit and offset",
            "schema": {"type": "integer", "minimum": 0},
        },
        "WWW-Authenticate": {
            "description": '`Bearer realm="tmdns"`',
            "schema": {"type": "string"},
        },
    }


def _responses() -> dict[str, Schema]:
    responses: dict[str, Schema] = {}
    for status, (name, description) in sorted(ERRORS.items()):
        responses[name] = {"description": description, "content": _json(_ref("Error"))}
        if status == 401:
            responses[name]["headers"] = {
                "WWW-Authenticate": _header("WWW-Authenticate")
            }
    return responses


def openapi_document() -> dict[str, Any]:
    """The whole OpenAPI 3.1.0 document of the tmdns API."""
    models, schemas = _pydantic_schemas()
    paths = _paths(Refs(models, schemas))
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "tmdns API",
            "version": __version__,
            "summary": "Authoritative DNS traffic manager",
            "description": "Every call but /healthz, /metrics and the documentation "
            "needs `Authorization: Bearer <token>`; changes need a write token. "
            "Names are accepted with or without the trailing dot and in any case; "
            "responses use the lowercase absolute form. Bodies are JSON objects; "
            "unknown fields are refused.",
            "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
        },
        "tags": [
            {"name": name}
            for name in (
                "zones",
                "profiles",
                "endpoints",
                "explain",
                "latency",
                "audit",
                "meta",
            )
        ],
        "paths": paths,
        "components": {
            "schemas": dict(sorted(schemas.items())),
            "parameters": _parameters(),
            "headers": _headers(),
            "responses": _responses(),
            "securitySchemes": {
                "bearerAuth": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "An API token (`TMDNS_BOOTSTRAP_TOKEN` at start)",
                }
            },
        },
    }
